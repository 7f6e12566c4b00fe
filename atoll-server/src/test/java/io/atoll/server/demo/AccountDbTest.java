package io.atoll.server.demo;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.atoll.core.FencingToken;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

/** The accounts database fences writes by the whole token: epoch, then lease generation. */
class AccountDbTest {

  private static final AtomicInteger DBS = new AtomicInteger();

  private static AccountDb db() throws Exception {
    String url = "jdbc:h2:mem:accounts-" + DBS.incrementAndGet() + ";DB_CLOSE_DELAY=-1";
    AccountDb.createSchema(url);
    return new AccountDb(url, 2);
  }

  @Test
  void anActivationOfAnOlderLeaseGenerationAtTheSameEpochCanNoLongerWrite() throws Exception {
    try (AccountDb db = db()) {
      FencingToken old = new FencingToken(3, 7, 1);
      FencingToken renewed = new FencingToken(3, 7, 2); // the same epoch, after a lapse of the lease
      AccountDb.Activation a = db.activate("acc", old, "pod-a", AccountDb.nowMicros());
      assertThat(db.deposit("acc", 1, 10, old, "pod-a", a.id(), AccountDb.nowMicros())).isTrue();
      AccountDb.Activation b = db.activate("acc", renewed, "pod-a", AccountDb.nowMicros());
      assertThat(b.balance()).isEqualTo(10);

      assertThatThrownBy(() -> db.deposit("acc", 2, 5, old, "pod-a", a.id(), AccountDb.nowMicros()))
          .isInstanceOf(AccountDb.StaleTokenException.class);
      assertThatThrownBy(() -> db.activate("acc", old, "pod-a", AccountDb.nowMicros()))
          .isInstanceOf(AccountDb.StaleTokenException.class);
      assertThat(db.deposit("acc", 3, 1, renewed, "pod-a", b.id(), AccountDb.nowMicros())).isTrue();
      assertThat(db.activate("acc", new FencingToken(3, 8, 0), "pod-b", AccountDb.nowMicros()).balance())
          .as("a newer epoch wins whatever its generation").isEqualTo(11);
      assertThatThrownBy(() -> db.deposit("acc", 4, 1, renewed, "pod-a", b.id(), AccountDb.nowMicros()))
          .isInstanceOf(AccountDb.StaleTokenException.class);
    }
  }

  @Test
  void theAuditReadsOneSnapshotSoADepositCommittedBetweenItsQueriesIsSeenByAllOrNone() throws Exception {
    String url = "jdbc:h2:mem:accounts-" + DBS.incrementAndGet() + ";DB_CLOSE_DELAY=-1";
    AccountDb.createSchema(url);
    try (AccountDb db = new AccountDb(url, 2); java.sql.Connection c = Audit.snapshot(url);
        java.sql.Statement s = c.createStatement()) {
      FencingToken t = new FencingToken(1, 1, 0);
      AccountDb.Activation a = db.activate("acc", t, "pod-a", AccountDb.nowMicros());
      db.deposit("acc", 1, 5, t, "pod-a", a.id(), AccountDb.nowMicros());
      long sum;
      try (java.sql.ResultSet rs = s.executeQuery("SELECT SUM(amount) FROM ops WHERE account = 'acc'")) {
        rs.next();
        sum = rs.getLong(1);
      }
      // a handler that outlived its ask commits while the audit is between two queries
      db.deposit("acc", 2, 7, t, "pod-a", a.id(), AccountDb.nowMicros());
      try (java.sql.ResultSet rs = s.executeQuery("SELECT balance FROM accounts WHERE id = 'acc'")) {
        rs.next();
        assertThat(rs.getLong(1)).as("the balance the same snapshot saw").isEqualTo(sum).isEqualTo(5);
      }
    }
  }

  @Test
  void claimsAndAppliedWritesRecordTheirPlaceInTheRowsOrderAndTheClaimItsCommit() throws Exception {
    String url = "jdbc:h2:mem:accounts-" + DBS.incrementAndGet() + ";DB_CLOSE_DELAY=-1";
    AccountDb.createSchema(url);
    try (AccountDb db = new AccountDb(url, 2)) {
      long before = AccountDb.nowMicros();
      AccountDb.Activation a = db.activate("acc", new FencingToken(1, 1, 0), "pod-a", before);
      db.deposit("acc", 1, 5, new FencingToken(1, 1, 0), "pod-a", a.id(), AccountDb.nowMicros());
      AccountDb.Activation b = db.activate("acc", new FencingToken(1, 2, 0), "pod-b", AccountDb.nowMicros());
      assertThatThrownBy(() -> db.deposit("acc", 2, 5, new FencingToken(1, 1, 0), "pod-a", a.id(),
          AccountDb.nowMicros())).isInstanceOf(AccountDb.StaleTokenException.class);
      db.deposit("acc", 3, 5, new FencingToken(1, 2, 0), "pod-b", b.id(), AccountDb.nowMicros());
      try (java.sql.Connection c = java.sql.DriverManager.getConnection(url, "sa", "");
          java.sql.Statement s = c.createStatement()) {
        java.sql.ResultSet rs = s.executeQuery("SELECT id, claim_seq, claimed, started FROM activations ORDER BY id");
        rs.next();
        assertThat(rs.getLong(2)).isEqualTo(1);
        assertThat(rs.getLong(3)).as("claimed after its start").isGreaterThanOrEqualTo(rs.getLong(4));
        rs.next();
        assertThat(rs.getLong(2)).isEqualTo(3);
        rs = s.executeQuery("SELECT op_id, seq FROM ops ORDER BY op_id");
        rs.next();
        assertThat(rs.getLong(2)).isEqualTo(2);
        rs.next();
        assertThat(rs.getLong(1)).isEqualTo(3);
        assertThat(rs.getLong(2)).as("a refused write takes no place").isEqualTo(4);
      }
      ActivationLog.Result log = ActivationLog.check(url, ActivationLog.Freezes.NONE);
      assertThat(log.overlapping()).isZero();
      assertThat(log.lateStarts()).as("the old token's deposit started after the newer activation did").isEqualTo(1);
    }
  }
}
