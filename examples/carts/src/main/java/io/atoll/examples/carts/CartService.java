package io.atoll.examples.carts;

import io.atoll.runtime.Sharding;
import java.util.concurrent.CountDownLatch;

/**
 * A pod of the cart service: {@code java -cp ... io.atoll.examples.carts.CartService MANAGER JDBC_URL}
 * (e.g. {@code 127.0.0.1:7070 jdbc:h2:tcp://127.0.0.1:9092/carts}). Runs until stopped (SIGTERM
 * stops it gracefully: its carts move to the other pods).
 */
public final class CartService {

  private CartService() {}

  /** Starts a pod that hosts carts. */
  public static void main(String[] args) throws Exception {
    if (args.length != 2) {
      System.err.println("usage: CartService MANAGER_HOST:PORT JDBC_URL");
      System.exit(2);
    }
    CartStore store = new CartStore(args[1]);
    Sharding pod = Sharding.builder().manager(args[0]).register(Cart.TYPE, ctx -> new Cart(store)).start();
    System.out.println("cart service pod " + pod.podId() + " listening on " + pod.podId().address());
    CountDownLatch stopped = new CountDownLatch(1);
    Runtime.getRuntime().addShutdownHook(new Thread(() -> {
      pod.close();
      stopped.countDown();
    }));
    stopped.await();
  }
}
