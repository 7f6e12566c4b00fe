package io.atoll.bench.pekko;

import java.util.concurrent.CountDownLatch;

/**
 * A Pekko node hosting counters, run as its own process by {@link PekkoBench}:
 * {@code PekkoPod <seed host:port>}. Prints "listening on HOST:PORT" once it is a member that is
 * up. Public for the command line; not API.
 */
public final class PekkoPod {

  private PekkoPod() {}

  /** Runs the node until the process is stopped. */
  public static void main(String[] args) throws InterruptedException {
    if (args.length != 1) {
      throw new IllegalArgumentException("arguments: " + args.length + " (expected: <seed host:port>)");
    }
    PekkoNode node = PekkoNode.start("pod", 300, PekkoNode.addressOf(args[0]));
    org.apache.pekko.cluster.Cluster.get(org.apache.pekko.actor.typed.javadsl.Adapter.toClassic(node.system()))
        .registerOnMemberUp(() -> {
          System.out.println("pekko pod listening on " + node.address().host().get() + ":"
              + node.address().port().get());
          System.out.flush();
        });
    CountDownLatch done = new CountDownLatch(1);
    // Stopped with SIGTERM by the bench: end at once, without leaving the cluster gracefully
    // (pekko.coordinated-shutdown.run-by-jvm-shutdown-hook is off in PekkoNode's settings).
    Runtime.getRuntime().addShutdownHook(new Thread(() -> {
      node.system().terminate();
      done.countDown();
    }));
    done.await();
  }
}
