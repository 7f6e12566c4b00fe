package io.atoll.bench.durable;

import io.atoll.core.FencingToken;
import io.atoll.core.PodEntry;
import io.atoll.core.PodId;
import io.atoll.core.ShardHasher;
import io.atoll.core.spi.ForwardingStateStore;
import io.atoll.core.spi.StateStore;
import io.atoll.core.spi.StateStoreException;
import io.atoll.core.spi.StoredState;
import io.atoll.runtime.Durable;
import io.atoll.runtime.DurableContext;
import io.atoll.runtime.EntityContext;
import io.atoll.runtime.EntityFactory;
import io.atoll.runtime.EntityType;
import io.atoll.runtime.Reply;
import io.atoll.runtime.Sharding;
import io.atoll.store.redis.RedisStateStore;
import io.atoll.testkit.LocalCluster;
import java.io.IOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

/**
 * A third pod joins two that hold {@code --entities} live durable counters, their state in a real
 * {@code redis-server} that this bench starts (no persistence: Redis' own disk is not what is
 * measured): the seconds until the shards are spread evenly, how many times the store was read
 * for the entities that moved, and the first message to each of {@code --sample} moved entities
 * (asked one at a time from a client), p50 and p99. Run twice per round, alternately: with the
 * states carried in the hand-off, and with the new owner's activations reading the store instead
 * (the same carry is sent; the activations are only not shown it).
 *
 * <pre>
 * java -Xmx4g --add-opens=java.base/java.lang.invoke=ALL-UNNAMED -cp atoll-bench/target/benchmarks.jar \
 *     io.atoll.bench.durable.DurableJoinBench --entities 100000 --runs 3
 * </pre>
 */
public final class DurableJoinBench {

  /** A counter's messages. */
  public sealed interface Msg permits Inc, Get {}

  /** Adds one. */
  public record Inc(Reply<Long> reply) implements Msg {}

  /** Answers the count. */
  public record Get(Reply<Long> reply) implements Msg {}

  /** A counter's state. */
  public record Count(long n) {}

  static final EntityType<Msg> TYPE = EntityType.of("durable-bench", Msg.class).withIdleTime(Duration.ZERO);
  static final int SHARDS = 300;

  private DurableJoinBench() {}

  /** Runs the rounds and prints one line per run. */
  public static void main(String[] args) throws Exception {
    int entities = intArg(args, "--entities", 100_000);
    int runs = intArg(args, "--runs", 3);
    int sample = intArg(args, "--sample", 5_000);
    for (int r = 1; r <= runs; r++) {
      for (boolean carry : new boolean[] {r % 2 == 1, r % 2 == 0}) {
        System.out.println(run(entities, sample, carry));
      }
    }
  }

  private static int intArg(String[] args, String name, int dflt) {
    int i = Arrays.asList(args).indexOf(name);
    return i < 0 ? dflt : Integer.parseInt(args[i + 1]);
  }

  static String run(int entities, int sample, boolean carry) throws Exception {
    Path dir = Files.createTempDirectory("atoll-durable-bench");
    int port;
    try (ServerSocket s = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
      port = s.getLocalPort();
    }
    Process redis = new ProcessBuilder("redis-server", "--port", Integer.toString(port), "--bind", "127.0.0.1",
        "--save", "", "--appendonly", "no", "--dir", dir.toString()).redirectErrorStream(true)
        .redirectOutput(dir.resolve("redis.log").toFile()).start();
    try {
      awaitPong(port);
      AtomicLong claims = new AtomicLong();
      StateStore store = counting(RedisStateStore.open("redis://127.0.0.1:" + port + "/0?prefix=b&timeout=10s"), claims);
      EntityFactory<Msg> durable = Durable.entity(store, Count.class, new Count(0), DurableJoinBench::handle);
      EntityFactory<Msg> factory = carry ? durable : ctx -> durable.create(new Hidden(ctx));
      try (LocalCluster cluster = LocalCluster.builder().shards(SHARDS).podTemplate(b -> b.register(TYPE, factory))
          .start()) {
        cluster.addPod();
        cluster.addPod();
        cluster.awaitSettled(Duration.ofSeconds(60));
        Sharding client = cluster.addClient();
        activate(client, entities);
        long claimsBefore = claims.get();
        long t0 = System.nanoTime();
        Sharding joiner = cluster.addPod();
        cluster.awaitSettled(Duration.ofMinutes(5));
        double balancedSeconds = (System.nanoTime() - t0) / 1e9;
        PodId joined = joiner.podId();
        List<String> moved = new ArrayList<>();
        var config = cluster.manager().config();
        for (int i = 0; i < entities && moved.size() < sample; i++) {
          String id = "e" + i;
          PodEntry owner = config.ownerEntry(ShardHasher.DEFAULT.shardOf(id, SHARDS) - 1);
          if (owner != null && owner.id().equals(joined)) {
            moved.add(id);
          }
        }
        long[] nanos = new long[moved.size()];
        for (int i = 0; i < moved.size(); i++) {
          long s = System.nanoTime();
          client.entity(TYPE, moved.get(i)).<Long>ask(Get::new).toCompletableFuture().get(30, TimeUnit.SECONDS);
          nanos[i] = System.nanoTime() - s;
        }
        Arrays.sort(nanos);
        long reads = claims.get() - claimsBefore;
        return String.format("durable-join %s entities=%d moved_sampled=%d balanced_s=%.2f store_reads=%d"
            + " first_msg_p50_us=%.0f first_msg_p99_us=%.0f", carry ? "carried" : "read", entities, moved.size(),
            balancedSeconds, reads, nanos[nanos.length / 2] / 1e3, nanos[(int) (nanos.length * 0.99)] / 1e3);
      } finally {
        store.close();
      }
    } finally {
      redis.destroy();
      redis.waitFor(10, TimeUnit.SECONDS);
    }
  }

  static void handle(Msg msg, DurableContext<Count> ctx) throws StateStoreException {
    switch (msg) {
      case Inc i -> {
        ctx.setState(new Count(ctx.state().n() + 1));
        ctx.persist();
        i.reply().send(ctx.state().n());
      }
      case Get g -> g.reply().send(ctx.state().n());
    }
  }

  /** One increment to each counter, 512 in flight. */
  private static void activate(Sharding client, int entities) throws InterruptedException {
    Semaphore inFlight = new Semaphore(512);
    List<CompletableFuture<Long>> all = new ArrayList<>();
    for (int i = 0; i < entities; i++) {
      inFlight.acquire();
      CompletableFuture<Long> f = client.entity(TYPE, "e" + i).<Long>ask(Inc::new).toCompletableFuture();
      f.whenComplete((v, e) -> inFlight.release());
      all.add(f);
    }
    CompletableFuture.allOf(all.toArray(new CompletableFuture<?>[0])).orTimeout(5, TimeUnit.MINUTES).join();
  }

  private static StateStore counting(StateStore inner, AtomicLong claims) {
    return new ForwardingStateStore(inner) {
      @Override
      public StoredState claim(String type, String id, FencingToken token) throws StateStoreException {
        claims.incrementAndGet();
        return super.claim(type, id, token);
      }
    };
  }

  /** An activation's context without what the hand-off carried: the activation reads the store. */
  private record Hidden(EntityContext ctx) implements EntityContext {
    @Override
    public String entityId() {
      return ctx.entityId();
    }

    @Override
    public String entityType() {
      return ctx.entityType();
    }

    @Override
    public FencingToken token() {
      return ctx.token();
    }

    @Override
    public PodId pod() {
      return ctx.pod();
    }

    @Override
    public Sharding sharding() {
      return ctx.sharding();
    }

    @Override
    public Reply<Object> reply() {
      return ctx.reply();
    }

    @Override
    public void passivate() {
      ctx.passivate();
    }
  }

  private static void awaitPong(int port) throws IOException, InterruptedException {
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(20);
    while (true) {
      try (Socket s = new Socket(InetAddress.getLoopbackAddress(), port)) {
        s.setSoTimeout(500);
        s.getOutputStream().write("PING\r\n".getBytes(StandardCharsets.US_ASCII));
        byte[] b = s.getInputStream().readNBytes(7);
        if (new String(b, StandardCharsets.US_ASCII).equals("+PONG\r\n")) {
          return;
        }
      } catch (IOException e) {
        if (System.nanoTime() > deadline) {
          throw e;
        }
      }
      TimeUnit.MILLISECONDS.sleep(50); // polling for the server to listen
    }
  }
}
