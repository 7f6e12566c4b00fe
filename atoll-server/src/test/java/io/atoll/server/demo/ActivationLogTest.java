package io.atoll.server.demo;

import static org.assertj.core.api.Assertions.assertThat;

import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** The activation log's overlap check on hand-written histories in a real (in-memory) H2 database. */
class ActivationLogTest {

  static final AtomicInteger DBS = new AtomicInteger();
  String url;

  @BeforeEach
  void schema() throws SQLException {
    url = "jdbc:h2:mem:activations-" + DBS.incrementAndGet() + ";DB_CLOSE_DELAY=-1";
    AccountDb.createSchema(url);
  }

  private void sql(String s) throws SQLException {
    try (Connection c = DriverManager.getConnection(url, "sa", ""); Statement st = c.createStatement()) {
      st.execute(s);
    }
  }

  private void activation(long id, String pod, long epoch, long started, Long ended) throws SQLException {
    sql("INSERT INTO activations (id, account, pod, shard, epoch, started, ended) VALUES (" + id + ", 'a', '" + pod
        + "', 1, " + epoch + ", " + started + ", " + ended + ")");
  }

  private void write(long op, long activation, long started, long ended) throws SQLException {
    sql("INSERT INTO ops (op_id, account, amount, epoch, pod, activation, started, ended) VALUES (" + op
        + ", 'a', 1, 1, 'p', " + activation + ", " + started + ", " + ended + ")");
  }

  private void refused(long activation, long started, long ended) throws SQLException {
    sql("INSERT INTO stale_writes (account, pod, epoch, newer_epoch, what, activation, started, ended)"
        + " VALUES ('a', 'p', 1, 2, 'deposit', " + activation + ", " + started + ", " + ended + ")");
  }

  @Test
  void activationsOneAfterTheOtherDoNotOverlap() throws SQLException {
    activation(1, "127.0.0.1:1#a", 1, 100, 300L);
    write(1, 1, 150, 200);
    activation(2, "127.0.0.1:2#b", 2, 400, null);
    write(2, 2, 450, 500);
    ActivationLog.Result r = ActivationLog.check(url, ActivationLog.Freezes.NONE);
    assertThat(r.activations()).isEqualTo(2);
    assertThat(r.overlaps()).isEmpty();
  }

  @Test
  void aNewActivationWhileAnOldHandlerStillWritesOverlapsEvenWithTheSameToken() throws SQLException {
    activation(1, "127.0.0.1:1#a", 5, 100, null);
    activation(2, "127.0.0.1:1#a", 5, 200, null); // same pod, same token: issue 8 item 1
    write(1, 1, 150, 250); // the old handler ends after the new activation started
    write(2, 2, 260, 270);
    ActivationLog.Result r = ActivationLog.check(url, ActivationLog.Freezes.NONE);
    assertThat(r.overlapping()).isEqualTo(1);
    assertThat(r.overlaps().get(0).older().id()).isEqualTo(1);
    assertThat(r.overlaps().get(0).newer().id()).isEqualTo(2);
    assertThat(r.overlaps().get(0).describe()).contains("account a").contains("0.1 ms before");
  }

  @Test
  void aRefusedWriteAfterTheNewActivationStartedIsAnOverlapToo() throws SQLException {
    activation(1, "127.0.0.1:1#a", 1, 100, null);
    activation(2, "127.0.0.1:2#b", 2, 200, null);
    refused(1, 150, 250);
    assertThat(ActivationLog.check(url, ActivationLog.Freezes.NONE).overlapping()).isEqualTo(1);
  }

  @Test
  void aGracefulStopAfterTheNewActivationStartedIsAnOverlap() throws SQLException {
    activation(1, "127.0.0.1:1#a", 1, 100, 250L);
    activation(2, "127.0.0.1:2#b", 2, 200, null);
    assertThat(ActivationLog.check(url, ActivationLog.Freezes.NONE).overlapping()).isEqualTo(1);
  }

  @Test
  void aFrozenPodFinishingItsHandlerIsExcusedButNotOneStartingANewHandler() throws SQLException {
    ActivationLog.Freezes pod1FrozenFrom120To300 = (pod, from, to) -> pod.startsWith("127.0.0.1:1#")
        && 120 < to && 300 > from;
    activation(1, "127.0.0.1:1#a", 1, 100, null);
    activation(2, "127.0.0.1:2#b", 2, 200, null);
    refused(1, 110, 310); // in its handler when frozen; refused by the token when thawed
    ActivationLog.Result r = ActivationLog.check(url, pod1FrozenFrom120To300);
    assertThat(r.overlapping()).isZero();
    assertThat(r.excused()).isEqualTo(1);

    refused(1, 320, 330); // and then it started another handler: two live instances
    r = ActivationLog.check(url, pod1FrozenFrom120To300);
    assertThat(r.overlapping()).isEqualTo(1);
    assertThat(r.excused()).isZero();
  }

  @Test
  void onlyActivationsOfTheSameAccountOverlap() throws SQLException {
    activation(1, "127.0.0.1:1#a", 1, 100, null);
    write(1, 1, 100, 1_000);
    sql("INSERT INTO activations (id, account, pod, shard, epoch, started) VALUES (3, 'b', 'x', 1, 1, 500)");
    activation(2, "127.0.0.1:2#b", 2, 900, null);
    ActivationLog.Result r = ActivationLog.check(url, ActivationLog.Freezes.NONE);
    assertThat(r.activations()).isEqualTo(3);
    assertThat(r.overlapping()).isEqualTo(1);
  }
}
