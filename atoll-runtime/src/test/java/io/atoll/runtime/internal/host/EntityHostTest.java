package io.atoll.runtime.internal.host;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.atoll.core.Claim;
import io.atoll.core.ClusterConfig;
import io.atoll.core.FencingToken;
import io.atoll.core.Pod;
import io.atoll.core.PodAddress;
import io.atoll.core.PodEntry;
import io.atoll.core.PodId;
import io.atoll.core.PodStatus;
import io.atoll.core.PodVersion;
import io.atoll.core.Ticker;
import io.atoll.runtime.EntityFactory;
import io.atoll.runtime.EntityType;
import io.atoll.runtime.ShardingObserver;
import io.atoll.runtime.internal.cluster.Lease;
import io.atoll.runtime.internal.cluster.QuietViews;
import io.atoll.runtime.internal.cluster.View;
import io.atoll.runtime.internal.host.EntityInstanceTest.Msg;
import io.atoll.runtime.internal.util.PodContext;
import io.atoll.runtime.internal.util.TestSettings;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * The host's serving state machine with real instances and real drains: a view gives shards, a
 * release hands them off (queued messages first, then the termination message, then refusals), a
 * release that outlasts its timeout fences the entities and still waits for their handlers, a
 * config that gives a shard away without a release fences it, an older config never serves a
 * shard again after a newer release, the lease running out fences everything, and a graceful stop
 * refuses everything until a new incarnation. The view, the lease and the clock are the pod's own
 * classes; the clock is the test's, moved by hand.
 */
class EntityHostTest {

  private static final PodId SELF = new PodId(new PodAddress("127.0.0.1", 7001), 1);
  private static final PodId PEER = new PodId(new PodAddress("127.0.0.1", 7002), 2);
  private static final int SHARDS = 4;
  private static final long HOUR = TimeUnit.HOURS.toNanos(1);
  private static final long WAIT_SECONDS = 10;
  /** A release timeout no drain outlasts on a loaded machine, for releases that must not fence. */
  private static final long PATIENT = TimeUnit.SECONDS.toMillis(WAIT_SECONDS);

  private final AtomicLong clock = new AtomicLong(1_000_000);
  private final Ticker ticker = clock::get;
  private final List<String> events = Collections.synchronizedList(new ArrayList<>());
  private final List<String> handled = Collections.synchronizedList(new ArrayList<>());
  private final List<String> served = Collections.synchronizedList(new ArrayList<>());
  private final CountDownLatch entered = new CountDownLatch(1);
  private final CountDownLatch letGo = new CountDownLatch(1);
  private final ExecutorService releasing = Executors.newCachedThreadPool();
  private int releasesFinished;

  private final ShardingObserver observer = new ShardingObserver() {
    @Override
    public void shardActivated(int shard, long epoch) {
      events.add("shard " + shard + " served at " + epoch);
    }

    @Override
    public void shardReleased(int shard) {
      events.add("shard " + shard + " released");
    }

    @Override
    public void entityActivated(String type, String entityId, FencingToken token) {
      events.add("activated " + entityId + " at " + token.epoch());
    }

    @Override
    public void entityDeactivated(String type, String entityId, FencingToken token) {
      events.add("deactivated " + entityId);
    }
  };

  private View view;
  private Lease lease;
  private TypeRuntime type;
  private EntityHost host;

  @AfterEach
  void letHandlersGo() {
    letGo.countDown();
    releasing.shutdownNow();
  }

  /** A host of one type, "stop" its termination message unless {@code terminationMessage} is null. */
  private EntityHost host(EntityType<String> declared) {
    EntityFactory<String> factory = ctx -> (msg, c) -> {
      if (msg.equals("hold")) {
        entered.countDown();
        if (!letGo.await(WAIT_SECONDS, TimeUnit.SECONDS)) {
          throw new IllegalStateException("the test never let the handler go");
        }
      }
      handled.add(c.entityId() + ":" + msg);
    };
    @SuppressWarnings("unchecked")
    EntityFactory<Object> f = (EntityFactory<Object>) (EntityFactory<?>) factory;
    type = new TypeRuntime(declared, null, f, 0);
    PodContext base = TestSettings.context(ticker);
    PodContext ctx = new PodContext(base.settings().withObserver(observer), ticker, base.scheduler());
    view = QuietViews.of(SHARDS, SELF);
    lease = QuietViews.lease(ticker, view);
    lease.renewed(clock.get(), HOUR);
    host = new EntityHost(ctx, view, lease, new TypeRuntime[] {type}, null, new EntityHost.Callback() {
      @Override
      public void shardServed(int shard) {
        served.add("served " + shard);
      }

      @Override
      public synchronized void releaseFinished() {
        releasesFinished++;
      }
    });
    return host;
  }

  private static EntityType<String> counters() {
    return EntityType.of("counter", String.class).withTerminationMessage("stop");
  }

  private static PodEntry entry(PodId id) {
    return new PodEntry(new Pod(id, PodVersion.of("1")), PodStatus.ACTIVE, 1);
  }

  /** A config in which shard {@code shard} (1-based) is {@code owner}'s at {@code epoch}, the rest nobody's. */
  private static ClusterConfig config(int shard, PodId owner, long epoch) {
    return ClusterConfig.empty(SHARDS).toBuilder()
        .pod(entry(SELF))
        .pod(entry(PEER))
        .claim(shard - 1, Claim.stable(owner, epoch))
        .build();
  }

  private Msg send(int shard, String entity, String text) {
    Msg s = new Msg(text);
    assertThat(host.deliverLocal(shard, type, entity, s)).as("shard %d accepted %s", shard, text).isTrue();
    return s;
  }

  /** A host serving shard 1 at epoch 1, whose entity "a" is inside its handler of "hold" until {@link #letGo}. */
  private Msg servingAWithItsHandlerHeld() throws InterruptedException {
    host(counters());
    host.onView(config(1, SELF, 1), SELF, true);
    Msg hold = send(1, "a", "hold");
    assertThat(entered.await(WAIT_SECONDS, TimeUnit.SECONDS)).isTrue();
    return hold;
  }

  private CompletableFuture<List<Integer>> releaseAsync(int shard, long newEpoch, long timeoutMillis) {
    return CompletableFuture.supplyAsync(() -> host.release(List.of(shard), newEpoch, timeoutMillis).shards(), releasing);
  }

  @Test
  void aConfigThatNamesThisPodServesTheShardAndReportsItOnce() throws Exception {
    host(counters());
    assertThat(host.accepts(2)).isFalse();
    assertThat(host.deliverLocal(2, type, "a", new Msg("early"))).as("not served yet: the route keeps it").isFalse();

    host.onView(config(2, SELF, 3), SELF, true);
    host.onView(config(2, SELF, 3), SELF, true); // the same config again changes nothing

    assertThat(served).containsExactly("served 2");
    assertThat(host.accepts(2)).isTrue();
    assertThat(host.accepts(1)).isFalse();
    assertThat(send(2, "a", "one").awaitFate()).isEqualTo("handled");
    assertThat(handled).containsExactly("a:one");
    assertThat(events).containsExactly("shard 2 served at 3", "activated a at 3");
  }

  @Test
  void aConfigOfAnInactivePodServesNothing() {
    host(counters());
    host.onView(config(2, SELF, 3), SELF, false);
    assertThat(served).isEmpty();
    assertThat(host.accepts(2)).isFalse();
  }

  @Test
  void aReleaseHandlesWhatWasQueuedThenTheTerminationMessageAndOnlyThenReturns() throws Exception {
    Msg hold = servingAWithItsHandlerHeld();
    Msg queued = send(1, "a", "queued");
    Msg other = send(1, "b", "other");
    assertThat(other.awaitFate()).isEqualTo("handled");

    CompletableFuture<List<Integer>> release = releaseAsync(1, 2, PATIENT);
    await().atMost(Duration.ofSeconds(WAIT_SECONDS)).until(() -> !host.accepts(1));
    assertThat(host.deliverLocal(1, type, "a", new Msg("late"))).as("after the release began: refused").isFalse();
    assertThat(release).as("a handler of the shard still runs").isNotDone();

    letGo.countDown();
    assertThat(release.get(2 * WAIT_SECONDS, TimeUnit.SECONDS)).containsExactly(1);
    assertThat(hold.fate).isEqualTo("handled");
    assertThat(queued.fate).isEqualTo("handled");
    assertThat(handled).containsSubsequence("a:hold", "a:queued", "a:stop");
    assertThat(handled).contains("b:stop");
    assertThat(events).contains("deactivated a", "deactivated b").endsWith("shard 1 released");
    assertThat(releasesFinished).isEqualTo(1);
  }

  @Test
  void aHandlerThatOutlastsTheReleaseIsFencedAndTheReleaseStillWaitsForIt() throws Exception {
    servingAWithItsHandlerHeld();
    Msg queued = send(1, "a", "queued");

    CompletableFuture<List<Integer>> release = releaseAsync(1, 2, 1);
    assertThat(queued.awaitFate()).as("fenced: what waited behind the handler goes back to its sender")
        .isEqualTo("bounced");
    assertThat(release).as("never reported released while its handler runs").isNotDone();
    assertThat(events).doesNotContain("shard 1 released");

    letGo.countDown();
    assertThat(release.get(2 * WAIT_SECONDS, TimeUnit.SECONDS)).containsExactly(1);
    assertThat(handled).as("its handler had ended; a fenced entity gets no termination message")
        .containsExactly("a:hold");
    assertThat(events).as("the fenced activation ended before the shard was reported released")
        .endsWith("deactivated a", "shard 1 released");
  }

  @Test
  void aReleaseWhoseEntitiesTheLapsedLeaseFencedStillWaitsForTheirRunningHandlers() throws Exception {
    servingAWithItsHandlerHeld();

    CompletableFuture<List<Integer>> release = releaseAsync(1, 2, PATIENT);
    await().atMost(Duration.ofSeconds(WAIT_SECONDS)).until(() -> !host.accepts(1));
    clock.addAndGet(HOUR);
    host.fenceAll(); // the lease ran out during the hand-off: the fence finishes the stop markers
    assertThat(events).contains("shard 1 released");
    // The release never reports a shard while one of its handlers runs (before, it returned at once).
    await("the release still waiting for the handler").during(Duration.ofMillis(300)).atMost(Duration.ofSeconds(2))
        .until(() -> !release.isDone());

    letGo.countDown();
    assertThat(release.get(2 * WAIT_SECONDS, TimeUnit.SECONDS)).containsExactly(1);
    assertThat(handled).containsExactly("a:hold");
    assertThat(events).endsWith("deactivated a", "shard 1 released");
  }

  @Test
  void aReleaseOlderThanTheClaimThisPodServesKeepsTheShard() throws Exception {
    host(counters());
    host.onView(config(1, SELF, 5), SELF, true);
    send(1, "a", "one").awaitFate();

    assertThat(releaseAsync(1, 5, PATIENT).get(2 * WAIT_SECONDS, TimeUnit.SECONDS)).as("re-issued to this pod at 5")
        .isEmpty();
    assertThat(host.accepts(1)).isTrue();
    assertThat(releaseAsync(1, 6, PATIENT).get(2 * WAIT_SECONDS, TimeUnit.SECONDS)).containsExactly(1);
    assertThat(host.accepts(1)).isFalse();
  }

  @Test
  void afterAReleaseOnlyAClaimAtLeastAsNewServesTheShardAgain() throws Exception {
    host(counters());
    host.onView(config(1, SELF, 1), SELF, true);
    send(1, "a", "one").awaitFate();
    assertThat(releaseAsync(1, 7, PATIENT).get(2 * WAIT_SECONDS, TimeUnit.SECONDS)).containsExactly(1);

    host.onView(config(1, SELF, 6), SELF, true); // a config older than the hand-off
    assertThat(host.accepts(1)).as("a stale config never serves a released shard").isFalse();

    host.onView(config(1, SELF, 7), SELF, true);
    assertThat(host.accepts(1)).isTrue();
    assertThat(served).containsExactly("served 1", "served 1");
    assertThat(send(1, "a", "two").awaitFate()).isEqualTo("handled");
    assertThat(events).contains("activated a at 7");
  }

  @Test
  void aConcurrentReleaseOfTheSameShardReturnsOnlyWhenTheFirstHasStoppedItsEntities() throws Exception {
    servingAWithItsHandlerHeld();

    CompletableFuture<List<Integer>> first = releaseAsync(1, 2, PATIENT);
    await().atMost(Duration.ofSeconds(WAIT_SECONDS)).until(() -> !host.accepts(1));
    CompletableFuture<List<Integer>> second =
        CompletableFuture.supplyAsync(() -> host.release(List.of(1), 3, 1).shards(), releasing);
    try {
      await("the retry waits for the stop the first release began").during(Duration.ofMillis(300))
          .atMost(Duration.ofSeconds(2)).until(() -> !first.isDone() && !second.isDone());
      letGo.countDown();
      assertThat(second.get(2 * WAIT_SECONDS, TimeUnit.SECONDS)).containsExactly(1);
      assertThat(first.get(2 * WAIT_SECONDS, TimeUnit.SECONDS)).containsExactly(1);
      assertThat(handled).containsExactly("a:hold", "a:stop");
    } finally {
      letGo.countDown();
    }
  }

  @Test
  void aConfigThatGivesTheShardAwayWithoutAReleaseFencesItsEntitiesAtOnce() throws Exception {
    servingAWithItsHandlerHeld();
    Msg queued = send(1, "a", "queued");
    Msg idle = send(1, "b", "one");
    assertThat(idle.awaitFate()).isEqualTo("handled");

    host.onView(config(1, PEER, 2), SELF, true); // this pod was taken for dead

    assertThat(queued.awaitFate()).isEqualTo("bounced");
    assertThat(host.accepts(1)).isFalse();
    assertThat(host.deliverLocal(1, type, "a", new Msg("late"))).isFalse();
    assertThat(events).contains("shard 1 released");
    // b's handler has answered, but its drain may not have finished its turn yet: then the drain,
    // not the fencing thread, ends b's activation, a moment later.
    await().atMost(Duration.ofSeconds(WAIT_SECONDS)).until(() -> events.contains("deactivated b"));
    assertThat(events).doesNotContain("deactivated a");
    letGo.countDown();
    await().atMost(Duration.ofSeconds(WAIT_SECONDS)).until(() -> events.contains("deactivated a"));
    assertThat(handled).as("no termination message when fenced").containsExactlyInAnyOrder("a:hold", "b:one");
  }

  @Test
  void whenTheLeaseRunsOutNothingIsAcceptedAndFenceAllStopsEveryShard() throws Exception {
    host(counters());
    host.onView(config(1, SELF, 1), SELF, true);
    Msg before = send(1, "a", "one");
    assertThat(before.awaitFate()).isEqualTo("handled");

    clock.addAndGet(HOUR);
    assertThat(host.accepts(1)).as("the gate reads the lease").isFalse();
    assertThat(host.deliverLocal(1, type, "a", new Msg("late"))).isFalse();

    host.fenceAll();
    await().atMost(Duration.ofSeconds(WAIT_SECONDS)).until(() -> events.contains("deactivated a"));
    assertThat(events).contains("shard 1 released");
    lease.renewed(clock.get(), HOUR);
    assertThat(host.accepts(1)).as("fenced: served again only when a config gives it again").isFalse();
    host.onView(config(1, SELF, 2), SELF, true);
    assertThat(host.accepts(1)).isTrue();
  }

  @Test
  void aGracefulStopRunsTerminationMessagesAndServesNothingUntilANewIncarnation() throws Exception {
    host(counters());
    host.onView(config(1, SELF, 1), SELF, true);
    send(1, "a", "one").awaitFate();

    host.releaseAll(PATIENT);
    assertThat(handled).containsExactly("a:one", "a:stop");
    assertThat(host.accepts(1)).isFalse();
    host.onView(config(1, SELF, 2), SELF, true);
    assertThat(host.accepts(1)).as("a stopping pod takes no shard").isFalse();

    host.resetForNewIncarnation();
    host.onView(config(1, SELF, 2), SELF, true);
    assertThat(host.accepts(1)).isTrue();
  }

  @Test
  void aTypeOnTheSharedDrainsIsReleasedTheSameWay() throws Exception {
    host(counters().withNonBlockingHandlers());
    host.onView(config(3, SELF, 1), SELF, true);
    List<Msg> sent = new ArrayList<>();
    for (int i = 0; i < 50; i++) {
      sent.add(send(3, "e" + (i % 5), "m" + i));
    }
    assertThat(releaseAsync(3, 2, PATIENT).get(2 * WAIT_SECONDS, TimeUnit.SECONDS))
        .containsExactly(3);
    for (Msg s : sent) {
      assertThat(s.fate).as(s.text).isEqualTo("handled");
    }
    List<String> order = List.copyOf(handled);
    for (int e = 0; e < 5; e++) {
      String entity = "e" + e + ":";
      List<String> its = order.stream().filter(h -> h.startsWith(entity)).toList();
      assertThat(its).as("e%d: its ten messages in order, then its termination message", e).hasSize(11)
          .endsWith(entity + "stop").startsWith(entity + "m" + e, entity + "m" + (e + 5));
    }
  }

  @Test
  void carriedStatesAreKeptOnlyUntilTheShardIsServedUnderTheirClaimEvenIfItStoppedSince() {
    host(counters());
    java.util.List<Left> left = java.util.List.of(
        new Left("counter", "a", new io.atoll.core.spi.StoredState(3, new byte[] {1})));
    assertThat(host.keepCarried(2, 5, left)).isEqualTo(1); // shard 2 comes here at epoch 5 next
    host.onView(config(2, SELF, 5), SELF, true);
    assertThat(host.keepCarried(2, 5, left)).as("late: served at 5 already").isZero();
    assertThat(host.keepCarried(2, 4, left)).as("older than the claim served").isZero();
    host.fenceAll(); // the lease ran out: the shard is not served, but it was at epoch 5
    assertThat(host.keepCarried(2, 5, left)).as("late after a lapse").isZero();
    assertThat(host.keepCarried(2, 6, left)).as("a newer hand-off").isEqualTo(1);
    assertThat(host.keepCarried(0, 6, left)).as("no such shard").isZero();
    assertThat(host.keepCarried(SHARDS + 1, 6, left)).as("no such shard").isZero();
  }
}
