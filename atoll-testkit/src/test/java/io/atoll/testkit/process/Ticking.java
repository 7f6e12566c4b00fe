package io.atoll.testkit.process;

import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

/**
 * The trivial process of the harness tests: announces an address, then prints a tick every 50 ms.
 * {@code fail} exits at once with code 3; {@code stubborn} never finishes its shutdown hook;
 * {@code parent} is stubborn too and first starts a child process ({@code sleep}) and prints its pid.
 */
public final class Ticking {

  private Ticking() {}

  /** Runs until stopped. */
  public static void main(String[] args) throws InterruptedException, java.io.IOException {
    String mode = args.length > 0 ? args[0] : "";
    if (mode.equals("fail")) {
      System.out.println("bad configuration");
      System.exit(3);
    }
    if (mode.equals("parent")) {
      Process child = new ProcessBuilder("sleep", "600").start();
      System.out.println("child pid " + child.pid());
    }
    Runtime.getRuntime().addShutdownHook(new Thread(() -> {
      System.out.println("stopping");
      System.out.flush();
      if (mode.equals("stubborn") || mode.equals("parent")) {
        try {
          new CountDownLatch(1).await(); // never lets the JVM exit: only SIGKILL ends it
        } catch (InterruptedException e) {
          Thread.currentThread().interrupt();
        }
      }
    }));
    System.out.println("ticking listening on 127.0.0.1:4242");
    for (long i = 0; ; i++) {
      System.out.println("tick " + i);
      System.out.flush();
      TimeUnit.MILLISECONDS.sleep(50); // the pace of the ticks; the output is the point
    }
  }
}
