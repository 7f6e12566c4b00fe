package io.atoll.testkit.runtime;

import io.atoll.runtime.Entity;
import io.atoll.runtime.EntityContext;
import io.atoll.runtime.EntityType;
import io.atoll.runtime.Reply;
import io.atoll.runtime.Sharding;
import io.atoll.testkit.junit.PodTemplate;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

/** The test entity: a counter that also records the order of what it was told. */
public final class Counter implements Entity<Counter.Msg> {

  sealed interface Msg permits Add, Get, Append, Log, Fail, Block, Token, Where, Stop {}

  record Add(long delta) implements Msg {}

  record Get(Reply<Long> reply) implements Msg {}

  record Append(int sender, long seq) implements Msg {}

  record Log(Reply<List<Long>> reply, int sender) implements Msg {}

  record Fail(String why) implements Msg {}

  /** Blocks the entity until the latch named by key opens (for tests of slow handlers). */
  record Block(String key) implements Msg {}

  record Token(Reply<String> reply) implements Msg {}

  /**
   * Answers the thread its handler runs on; with {@code relayTo}, that counter's answer too, after
   * this one's ("mine|theirs"), asked without blocking.
   */
  record Where(Reply<String> reply, String relayTo) implements Msg {}

  /** How {@link Where} names a thread: its id, and whether it is virtual. */
  static String describe(Thread t) {
    return t.threadId() + (t.isVirtual() ? " virtual" : " platform");
  }

  record Stop() implements Msg {}

  /** Pods hosting counters: the template of the cluster tests. */
  public static final class Pods implements PodTemplate {
    /** Creates it. */
    public Pods() {}

    @Override
    public Sharding.Builder apply(Sharding.Builder b) {
      return b.register(TYPE, ctx -> new Counter());
    }
  }

  /**
   * Pods hosting counters on their shared drains ({@link EntityType#withNonBlockingHandlers}):
   * the same tests, with the entities run the other way a pod runs them.
   */
  public static final class SharedDrainPods implements PodTemplate {
    /** Creates it. */
    public SharedDrainPods() {}

    @Override
    public Sharding.Builder apply(Sharding.Builder b) {
      return b.register(TYPE.withNonBlockingHandlers(), ctx -> new Counter());
    }
  }

  /**
   * Pods hosting counters whose local sends may be handled on the sending thread
   * ({@link EntityType#withInlineLocalSends}).
   */
  public static final class InlinePods implements PodTemplate {
    /** Creates it. */
    public InlinePods() {}

    @Override
    public Sharding.Builder apply(Sharding.Builder b) {
      return b.register(TYPE.withInlineLocalSends(), ctx -> new Counter());
    }
  }

  static final EntityType<Msg> TYPE = EntityType.of("counter", Msg.class).withTerminationMessage(new Stop());

  static final java.util.Map<String, CountDownLatch> LATCHES = new java.util.concurrent.ConcurrentHashMap<>();

  /** Opened by a {@link Block} handler as it starts to wait on its latch, when one is put here. */
  static final java.util.Map<String, CountDownLatch> ENTERED = new java.util.concurrent.ConcurrentHashMap<>();

  /**
   * What every activation of every counter in this JVM handled, per entity and sender, in the
   * order handled: the "database" that outlives activations, for order and loss checks.
   */
  static final java.util.Map<String, List<Long>> JOURNAL = new java.util.concurrent.ConcurrentHashMap<>();

  /**
   * How many {@link Append}s were handled on each thread whose name begins with {@code "load-"}:
   * a load generator's own thread, so a count here is a message handled on its sender's thread.
   */
  static final java.util.Map<String, Long> HANDLED_ON_LOAD_THREAD = new java.util.concurrent.ConcurrentHashMap<>();

  /** How many {@link Append}s were handled on the thread named {@code name} (0 if none). */
  static long handledOnThread(String name) {
    return HANDLED_ON_LOAD_THREAD.getOrDefault(name, 0L);
  }

  static List<Long> journal(String entityId, int sender) {
    List<Long> l = JOURNAL.get(entityId + "#" + sender);
    if (l == null) {
      return List.of();
    }
    synchronized (l) {
      return new ArrayList<>(l);
    }
  }

  private long value;
  private final java.util.Map<Integer, List<Long>> appended = new java.util.HashMap<>();

  @Override
  public void onMessage(Msg msg, EntityContext ctx) throws Exception {
    switch (msg) {
      case Add a -> value += a.delta();
      case Get g -> g.reply().send(value);
      case Append a -> {
        appended.computeIfAbsent(a.sender(), k -> new ArrayList<>()).add(a.seq());
        List<Long> j = JOURNAL.computeIfAbsent(ctx.entityId() + "#" + a.sender(), k -> new ArrayList<>());
        synchronized (j) {
          j.add(a.seq());
        }
        String thread = Thread.currentThread().getName();
        if (thread.startsWith("load-")) {
          HANDLED_ON_LOAD_THREAD.merge(thread, 1L, Long::sum);
        }
      }
      case Log l -> l.reply().send(new ArrayList<>(appended.getOrDefault(l.sender(), List.of())));
      case Fail f -> throw new IllegalStateException(f.why());
      case Block b -> {
        CountDownLatch latch = LATCHES.get(b.key());
        CountDownLatch entered = ENTERED.get(b.key());
        if (entered != null) {
          entered.countDown();
        }
        if (latch != null && !latch.await(30, TimeUnit.SECONDS)) {
          throw new IllegalStateException("latch " + b.key() + " never opened");
        }
      }
      case Token t -> t.reply().send(ctx.pod() + " " + ctx.token());
      case Where w -> {
        String here = describe(Thread.currentThread());
        if (w.relayTo() == null) {
          w.reply().send(here);
        } else {
          Reply<String> reply = w.reply();
          ctx.sharding().entity(TYPE, w.relayTo()).<String>ask(r -> new Where(r, null))
              .whenComplete((there, e) -> reply.send(here + "|" + (e != null ? e.toString() : there)));
        }
      }
      case Stop s -> { }
    }
  }
}
