package io.atoll.examples.carts;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import io.atoll.runtime.Sharding;
import io.atoll.state.jdbc.JdbcStateStore;
import java.util.concurrent.CountDownLatch;

/**
 * A pod of the cart service: {@code java -cp ... io.atoll.examples.carts.CartService MANAGER JDBC_URL [USER [PASSWORD]]}
 * (e.g. {@code 127.0.0.1:7070 jdbc:h2:tcp://127.0.0.1:9092/carts}). The carts' state is in the
 * table {@code atoll_entity_state} of that database, created if missing. Runs until stopped
 * (SIGTERM stops it gracefully: its carts move to the other pods and read their items there).
 */
public final class CartService {

  private CartService() {}

  /** Starts a pod that hosts carts. */
  public static void main(String[] args) throws Exception {
    if (args.length < 2 || args.length > 4) {
      System.err.println("usage: CartService MANAGER_HOST:PORT JDBC_URL [USER [PASSWORD]]");
      System.exit(2);
    }
    HikariConfig config = new HikariConfig();
    config.setJdbcUrl(args[1]);
    config.setUsername(args.length > 2 ? args[2] : "sa");
    config.setPassword(args.length > 3 ? args[3] : "");
    config.setMaximumPoolSize(8);
    HikariDataSource pool = new HikariDataSource(config);
    JdbcStateStore store = JdbcStateStore.open(pool);
    Sharding pod = Sharding.builder().manager(args[0]).register(Cart.TYPE, Cart.in(store)).start();
    System.out.println("cart service pod " + pod.podId() + " listening on " + pod.podId().address());
    CountDownLatch stopped = new CountDownLatch(1);
    Runtime.getRuntime().addShutdownHook(new Thread(() -> {
      pod.close();
      store.close();
      pool.close();
      stopped.countDown();
    }));
    stopped.await();
  }
}
