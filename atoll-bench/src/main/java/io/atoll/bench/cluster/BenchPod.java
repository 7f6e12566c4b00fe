package io.atoll.bench.cluster;

import io.atoll.runtime.Sharding;
import java.time.Duration;
import java.util.concurrent.CountDownLatch;

/**
 * A pod hosting {@link BenchCounter}s, run as its own process by {@link ClusterBench}:
 * {@code BenchPod <manager host:port>}. Prints "listening on HOST:PORT" once it has joined.
 */
public final class BenchPod {

  private BenchPod() {}

  /** Runs the pod until the process is stopped. */
  public static void main(String[] args) throws InterruptedException {
    Sharding.Builder b = Sharding.builder();
    if (args.length == 4) { // mutual TLS: ca, certificate, key
      b.tls(java.nio.file.Path.of(args[1]), java.nio.file.Path.of(args[2]), java.nio.file.Path.of(args[3]));
    }
    Sharding pod = b.manager(args[0]).register(BenchCounter.TYPE, ctx -> new BenchCounter())
        .terminationTimeout(Duration.ofSeconds(2)).start();
    System.out.println("bench pod listening on " + pod.podId().address());
    System.out.flush();
    CountDownLatch done = new CountDownLatch(1);
    Runtime.getRuntime().addShutdownHook(new Thread(() -> {
      pod.close();
      done.countDown();
    }));
    done.await();
  }
}
