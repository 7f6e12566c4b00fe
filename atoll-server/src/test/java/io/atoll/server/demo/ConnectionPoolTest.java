package io.atoll.server.demo;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.sql.Connection;
import java.sql.SQLException;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.Test;

/** The demo's connection pool, on a real (in-memory) H2 database. */
class ConnectionPoolTest {

  private static String url() {
    return "jdbc:h2:mem:pool-" + System.nanoTime() + ";DB_CLOSE_DELAY=-1";
  }

  @Test
  void oneConnectionIsOpenedAtOnceTheRestAsNeededUpToTheBoundThenTakersWait() throws Exception {
    try (ConnectionPool pool = new ConnectionPool(url(), 2)) {
      Connection a = pool.take(); // the one opened at the start
      Connection b = pool.take(); // opened now: under the bound
      assertThat(b).isNotSameAs(a);
      assertThat(a.getAutoCommit()).isFalse();
      CompletableFuture<Connection> third = CompletableFuture.supplyAsync(() -> {
        try {
          return pool.take();
        } catch (SQLException e) {
          throw new IllegalStateException(e);
        }
      });
      Awaitility.await().during(Duration.ofMillis(200)).atMost(Duration.ofSeconds(2)).until(() -> !third.isDone());
      pool.give(a);
      assertThat(third.get()).as("the bound reached, a taker gets the next one given back").isSameAs(a);
      pool.give(b);
      assertThat(pool.take()).isSameAs(b);
    }
  }

  @Test
  void aDatabaseThatCannotBeReachedFailsAtOnce() {
    assertThatThrownBy(() -> new ConnectionPool("jdbc:h2:tcp://127.0.0.1:1/nothing", 4))
        .isInstanceOf(SQLException.class);
    assertThatThrownBy(() -> new ConnectionPool(url(), 0)).isInstanceOf(IllegalArgumentException.class);
  }

  @Test
  void aConnectionGivenBackAfterTheCloseIsClosed() throws Exception {
    ConnectionPool pool = new ConnectionPool(url(), 2);
    Connection a = pool.take();
    pool.close();
    pool.give(a);
    assertThat(a.isClosed()).isTrue();
  }
}
