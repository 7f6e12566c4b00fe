package io.atoll.runtime.internal.host;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.atoll.runtime.EntityFactory;
import io.atoll.runtime.EntityType;
import io.atoll.runtime.internal.host.EntityInstanceTest.FakeHost;
import io.atoll.runtime.internal.host.EntityInstanceTest.Msg;
import io.atoll.runtime.internal.util.Draining;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.constraints.IntRange;
import net.jqwik.api.constraints.Size;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.Test;

/**
 * The drains shared by entities whose handlers never block: real instances and real virtual
 * threads; the watchdog is called by the test, as the pod timer would call it.
 */
class SharedDrainsTest {

  /** A host whose instances start on the shared drains under test. */
  static final class DrainHost extends FakeHost {
    final SharedDrains drains;

    DrainHost(SharedDrains drains) {
      this.drains = drains;
    }

    @Override
    public void start(EntityInstance instance) {
      drains.submit(instance);
    }
  }

  private final ShardState shard = new ShardState(3, 1);

  private static EntityFactory<Object> factory(EntityFactory<String> f) {
    @SuppressWarnings("unchecked")
    EntityFactory<Object> o = (EntityFactory<Object>) (EntityFactory<?>) f;
    return o;
  }

  /**
   * Shared drains whose threads never run: each drain is recorded in {@code made}, and runs, to
   * its end, only when the test calls it.
   */
  private static SharedDrains recording(List<Runnable> made, int busyLimit) {
    ThreadFactory notStarted = r -> {
      made.add(r);
      return Thread.ofVirtual().unstarted(() -> {}); // what the drains start: nothing
    };
    return new SharedDrains(notStarted, busyLimit);
  }

  private EntityInstance instance(InstanceHost host, String id, EntityFactory<String> f) {
    EntityType<String> type = EntityType.of("t", String.class).withNonBlockingHandlers();
    return new EntityInstance(host, shard, new TypeRuntime(type, null, factory(f), 0), id);
  }

  @Test
  void everyEntitysMessagesAreHandledOnceAndInOrderAndNeverByTwoDrainsAtOnce() throws Exception {
    inOrderAndNeverTwoAtOnce(false);
  }

  /** The same, with senders that run an idle entity's drain on their own threads, as local sends do. */
  @Test
  void alsoWhenSendersRunIdleEntitiesOnTheirOwnThreads() throws Exception {
    inOrderAndNeverTwoAtOnce(true);
  }

  private void inOrderAndNeverTwoAtOnce(boolean sendersRunHere) throws Exception {
    // Busy limit 4 and the watchdog called all along: several drains take the same entities in turn.
    SharedDrains drains = new SharedDrains(Thread.ofVirtual().name("test-drain").factory(), 4);
    DrainHost host = new DrainHost(drains);
    int entities = 20;
    int senders = 4;
    int perSender = 1500;
    Map<String, List<String>> handled = new ConcurrentHashMap<>();
    AtomicInteger overlaps = new AtomicInteger();
    AtomicInteger count = new AtomicInteger();
    List<EntityInstance> all = new ArrayList<>();
    for (int e = 0; e < entities; e++) {
      String id = "e" + e;
      List<String> log = Collections.synchronizedList(new ArrayList<>());
      handled.put(id, log);
      AtomicBoolean inHandler = new AtomicBoolean();
      all.add(instance(host, id, ctx -> (msg, c) -> {
        if (!inHandler.compareAndSet(false, true)) {
          overlaps.incrementAndGet();
        }
        log.add(msg);
        inHandler.set(false);
        count.incrementAndGet();
      }));
    }
    AtomicBoolean sending = new AtomicBoolean(true);
    Thread watchdog = Thread.ofPlatform().daemon().start(() -> {
      while (sending.get()) {
        drains.watch();
        Thread.onSpinWait();
      }
    });
    try {
      sendAndCheck(drains, all, handled, overlaps, count, senders, perSender, entities, sendersRunHere);
    } finally {
      sending.set(false);
      watchdog.join();
    }
  }

  private static void sendAndCheck(SharedDrains drains, List<EntityInstance> all,
      Map<String, List<String>> handled, AtomicInteger overlaps, AtomicInteger count, int senders, int perSender,
      int entities, boolean runHere) throws Exception {
    List<Thread> threads = new ArrayList<>();
    for (int s = 0; s < senders; s++) {
      int sender = s;
      threads.add(Thread.ofPlatform().start(() -> {
        for (int n = 0; n < perSender; n++) {
          EntityInstance i = all.get((n + sender) % entities);
          Msg m = new Msg(sender + ":" + n);
          EntityInstance.Offer r = i.offer(m, Integer.MAX_VALUE, runHere);
          if (r == EntityInstance.Offer.RUN_HERE) {
            i.runHere(m, Draining.mark());
          } else {
            assertThat(r).isEqualTo(EntityInstance.Offer.ACCEPTED);
          }
        }
      }));
    }
    for (Thread t : threads) {
      t.join();
    }
    Awaitility.await().atMost(Duration.ofSeconds(20)).until(() -> count.get() == senders * perSender);
    assertThat(overlaps.get()).as("handlers of one entity running at once").isZero();
    for (Map.Entry<String, List<String>> e : handled.entrySet()) {
      for (int s = 0; s < senders; s++) {
        String prefix = s + ":";
        List<Integer> seqs = e.getValue().stream().filter(m -> m.startsWith(prefix))
            .map(m -> Integer.parseInt(m.substring(prefix.length()))).toList();
        assertThat(seqs).as("sender %s to %s", s, e.getKey()).isSorted().doesNotHaveDuplicates();
      }
    }
    Awaitility.await().atMost(Duration.ofSeconds(5)).until(() -> drains.drains() == 0);
    assertThat(all).noneMatch(EntityInstance::busy);
  }

  @Test
  void aBlockedHandlerHoldsTheEntitiesBehindItOnlyUntilTheWatchdogStartsAnotherDrain() throws Exception {
    SharedDrains drains = new SharedDrains(Thread.ofVirtual().name("test-drain").factory(), 1);
    DrainHost host = new DrainHost(drains);
    CountDownLatch entered = new CountDownLatch(1);
    CountDownLatch release = new CountDownLatch(1);
    List<String> handled = Collections.synchronizedList(new ArrayList<>());
    EntityFactory<String> f = ctx -> (msg, c) -> {
      if (msg.equals("hold")) {
        entered.countDown();
        if (!release.await(10, TimeUnit.SECONDS)) {
          throw new IllegalStateException("the test never let the handler go");
        }
      }
      handled.add(msg);
    };
    EntityInstance blocked = instance(host, "blocked", f);
    EntityInstance neighbour = instance(host, "neighbour", f);
    blocked.offer(new Msg("hold"));
    assertThat(entered.await(5, TimeUnit.SECONDS)).isTrue();
    neighbour.offer(new Msg("n"));
    assertThat(drains.drains()).isEqualTo(1);

    drains.watch(); // the drain took an entity since the last look: not blocked yet
    assertThat(drains.drains()).isEqualTo(1);
    assertThat(handled).isEmpty();
    drains.watch(); // no progress for a whole period while an entity waits: another drain
    Awaitility.await().atMost(Duration.ofSeconds(5)).until(() -> handled.contains("n"));
    assertThat(handled).containsExactly("n");

    release.countDown();
    Awaitility.await().atMost(Duration.ofSeconds(5)).until(() -> handled.size() == 2);
    Awaitility.await().atMost(Duration.ofSeconds(5)).until(() -> drains.drains() == 0);
  }

  @Test
  void theWatchdogStartsNoSecondDrainBeforeTheOneItStartedHasBegun() {
    List<Runnable> made = new ArrayList<>();
    SharedDrains drains = recording(made, 1);
    DrainHost host = new DrainHost(drains);
    EntityInstance a = instance(host, "a", ctx -> (msg, c) -> {});
    EntityInstance b = instance(host, "b", ctx -> (msg, c) -> {});
    a.offer(new Msg("1")); // no drain ran: a new one, handed a
    b.offer(new Msg("2")); // one is counted: b is queued
    assertThat(made).hasSize(1);
    drains.watch(); // no progress while b waits: starts one
    assertThat(made).hasSize(2);
    drains.watch();
    drains.watch();
    assertThat(made).as("the one it started has not begun").hasSize(2);
    made.get(1).run(); // that drain begins: it handles b and ends
    assertThat(b.busy()).isFalse();
    assertThat(a.busy()).as("still the first drain's, which never ran").isTrue();
    assertThat(drains.drains()).isEqualTo(1);
    drains.watch();
    assertThat(made).as("nothing waits in the queue").hasSize(2);
    made.get(0).run();
    assertThat(a.busy()).isFalse();
    assertThat(drains.drains()).isZero();
  }

  @Test
  void aSenderThatFindsNoDrainStartsOneAndOnlyOne() {
    List<Runnable> made = new ArrayList<>();
    SharedDrains drains = recording(made, 2);
    DrainHost host = new DrainHost(drains);
    instance(host, "a", ctx -> (msg, c) -> {}).offer(new Msg("1"));
    instance(host, "b", ctx -> (msg, c) -> {}).offer(new Msg("2"));
    assertThat(made).hasSize(1);
    made.get(0).run(); // takes both, then ends
    assertThat(drains.drains()).isZero();
    instance(host, "c", ctx -> (msg, c) -> {}).offer(new Msg("3"));
    assertThat(made).hasSize(2);
  }

  @Test
  void aHandlerThatInterruptsItsThreadDoesNotInterruptTheNextEntitysHandler() throws Exception {
    List<Runnable> made = new ArrayList<>();
    SharedDrains drains = recording(made, 1);
    DrainHost host = new DrainHost(drains);
    List<Boolean> seen = Collections.synchronizedList(new ArrayList<>());
    EntityFactory<String> f = ctx -> (msg, c) -> {
      if (msg.equals("interrupt")) {
        Thread.currentThread().interrupt();
      } else {
        seen.add(Thread.currentThread().isInterrupted());
      }
    };
    instance(host, "a", f).offer(new Msg("interrupt"));
    instance(host, "b", f).offer(new Msg("check"));
    Thread drain = Thread.ofPlatform().start(made.get(0)); // one drain takes both, a first
    drain.join(5_000);
    assertThat(seen).containsExactly(false);
  }

  @Test
  void aBusyLimitBelowOneIsRefused() {
    assertThatThrownBy(() -> new SharedDrains(Thread.ofVirtual().factory(), 0))
        .isInstanceOf(IllegalArgumentException.class).hasMessage("busyLimit: 0 (expected: >= 1)");
    assertThat(SharedDrains.defaultBusyLimit()).isBetween(1, Runtime.getRuntime().availableProcessors());
  }

  @Test
  void theDeclarationSurvivesTheTypesOtherSettingsAndIsOffByDefault() {
    EntityType<String> plain = EntityType.of("t", String.class);
    assertThat(plain.nonBlockingHandlers()).isFalse();
    EntityType<String> t = plain.withNonBlockingHandlers().withIdleTime(Duration.ofSeconds(3)).withTerminationMessage("x")
        .withTypes(Integer.class).onRole("r").withHasher((id, n) -> 1);
    assertThat(t.nonBlockingHandlers()).isTrue();
    assertThat(t).isEqualTo(plain); // the same type for senders either way
    assertThat(new TypeRuntime(t, null, null, -1).sharedDrains).isTrue();
    assertThat(new TypeRuntime(plain, null, null, -1).sharedDrains).isFalse();
  }

  /**
   * A simulation: senders, the watchdog and drains (run on the test's thread, each to its end) in
   * any order. After every step no entity with messages is left without a drain to come, and at
   * most two drains are yet to begin (a sender's and the watchdog's); at the end every message was
   * handled, in order, and no drain is counted.
   */
  @Property(tries = 300)
  void noEntityIsLeftWithoutADrainWhateverTheOrderOfSendsWatchesAndDrains(
      @ForAll @Size(max = 60) List<@IntRange(min = 0, max = 4) Integer> steps) {
    List<Runnable> toBegin = new ArrayList<>();
    SharedDrains drains = recording(toBegin, 1);
    DrainHost host = new DrainHost(drains);
    List<List<String>> handled = new ArrayList<>();
    List<EntityInstance> entities = new ArrayList<>();
    for (int e = 0; e < 3; e++) {
      List<String> log = new ArrayList<>();
      handled.add(log);
      entities.add(instance(host, "e" + e, ctx -> (msg, c) -> log.add(msg)));
    }
    int[] sent = new int[3];
    for (int step : steps) {
      if (step < 3) {
        entities.get(step).offer(new Msg(String.valueOf(sent[step]++)));
      } else if (step == 3) {
        drains.watch();
      } else if (!toBegin.isEmpty()) {
        toBegin.remove(0).run();
      }
      boolean someWait = entities.stream().anyMatch(EntityInstance::busy);
      assertThat(!someWait || !toBegin.isEmpty()).as("an entity with messages has a drain to come").isTrue();
      assertThat(toBegin).as("drains yet to begin").hasSizeLessThanOrEqualTo(2);
      assertThat(drains.drains()).as("counted drains: those yet to begin").isEqualTo(toBegin.size());
    }
    while (!toBegin.isEmpty()) {
      toBegin.remove(0).run();
    }
    assertThat(entities).noneMatch(EntityInstance::busy);
    assertThat(drains.drains()).isZero();
    for (int e = 0; e < 3; e++) {
      List<String> expected = new ArrayList<>();
      for (int n = 0; n < sent[e]; n++) {
        expected.add(String.valueOf(n));
      }
      assertThat(handled.get(e)).as("e%s", e).isEqualTo(expected);
    }
  }

  @Test
  void theWatchdogsRule() {
    assertThat(SharedDrains.shouldStart(false, false, false, true, 1, 4)).as("nothing waits").isFalse();
    assertThat(SharedDrains.shouldStart(true, true, false, true, 1, 4)).as("one is yet to begin").isFalse();
    assertThat(SharedDrains.shouldStart(true, false, false, false, 3, 1)).as("blocked, over the busy limit")
        .isTrue();
    assertThat(SharedDrains.shouldStart(true, false, true, false, 1, 4)).as("busy, first look").isFalse();
    assertThat(SharedDrains.shouldStart(true, false, true, true, 1, 4)).as("busy, second look").isTrue();
    assertThat(SharedDrains.shouldStart(true, false, true, true, 4, 4)).as("busy, at the limit").isFalse();
  }

  @Test
  void aDrainThatCannotBeMadeIsCountedOutAndTheWatchdogTriesAgain() {
    List<Runnable> made = new ArrayList<>();
    AtomicInteger failures = new AtomicInteger(2);
    SharedDrains drains = new SharedDrains(r -> {
      if (failures.getAndDecrement() > 0) {
        throw new OutOfMemoryError("unable to create a thread (test)");
      }
      made.add(r);
      return Thread.ofVirtual().unstarted(() -> {});
    }, 1);
    List<String> handled = new ArrayList<>();
    EntityInstance i = instance(new DrainHost(drains), "e", ctx -> (msg, c) -> handled.add(msg));
    assertThatThrownBy(() -> i.offer(new Msg("a")))
        .isInstanceOf(OutOfMemoryError.class);
    assertThat(drains.drains()).isZero();
    drains.watch(); // waits, first look
    assertThatThrownBy(drains::watch).isInstanceOf(OutOfMemoryError.class);
    assertThat(drains.drains()).isZero();
    drains.watch(); // tries again: not stuck on the failed start
    assertThat(made).hasSize(1);
    made.get(0).run();
    assertThat(handled).containsExactly("a");
    assertThat(drains.drains()).isZero();
  }

  @Test
  void anEntityFencedWhileItWaitsInTheQueueBouncesItsMessagesAndLeavesItsShard() {
    List<Runnable> made = new ArrayList<>();
    SharedDrains drains = recording(made, 1);
    DrainHost host = new DrainHost(drains);
    List<String> handled = new ArrayList<>();
    EntityInstance a = instance(host, "a", ctx -> (msg, c) -> handled.add(msg));
    EntityInstance b = instance(host, "b", ctx -> (msg, c) -> handled.add(msg));
    a.offer(new Msg("a1"));
    Msg b1 = new Msg("b1");
    b.offer(b1); // queued behind a
    b.fence();
    assertThat(b1.fate).isEqualTo("bounced");
    made.get(0).run();
    assertThat(handled).containsExactly("a1");
    assertThat(b.busy()).isFalse();
    assertThat(host.events).contains("removed");
    assertThat(b.offer(new Msg("b2"))).isEqualTo(EntityInstance.Offer.CLOSED);
  }

  @Test
  void aPassivationRunsTheTerminationMessageOnASharedDrain() {
    List<Runnable> made = new ArrayList<>();
    SharedDrains drains = recording(made, 1);
    DrainHost host = new DrainHost(drains);
    List<String> handled = new ArrayList<>();
    EntityType<String> type = EntityType.of("t", String.class).withNonBlockingHandlers().withTerminationMessage("stop");
    EntityInstance i = new EntityInstance(host, shard, new TypeRuntime(type, null,
        factory(ctx -> (msg, c) -> handled.add(msg)), 0), "p");
    i.offer(new Msg("a"));
    made.get(0).run();
    host.now += 10;
    assertThat(i.passivateIfIdle(host.now)).as("a termination message to run first").isFalse();
    assertThat(made).hasSize(2);
    made.get(1).run();
    assertThat(handled).containsExactly("a", "stop");
    assertThat(host.events).containsExactly("activated", "deactivated", "removed");
    assertThat(i.offer(new Msg("b"))).isEqualTo(EntityInstance.Offer.REMOVED);
  }
}
