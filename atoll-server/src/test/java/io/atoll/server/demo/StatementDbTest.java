package io.atoll.server.demo;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.atoll.core.FencingToken;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

/**
 * The statements' tables fence lines by the whole token and book each op id once, and their audit
 * sees what went wrong: a line acknowledged but missing, a stale activation acting after a newer
 * one started, a line delivered twice.
 */
class StatementDbTest {

  private static final AtomicInteger DBS = new AtomicInteger();

  private static String url() throws Exception {
    String url = "jdbc:h2:mem:statements-" + DBS.incrementAndGet() + ";DB_CLOSE_DELAY=-1";
    StatementDb.createSchema(url);
    return url;
  }

  @Test
  void anOlderActivationCanNoLongerBookAndTheAuditCountsItAsTwoLiveInstances() throws Exception {
    String url = url();
    try (StatementDb db = new StatementDb(url, 2)) {
      FencingToken old = new FencingToken(61, 7, 1);
      FencingToken renewed = new FencingToken(61, 7, 2);
      StatementDb.Activation a = db.activate("acct-1", old, "pod-a", AccountDb.nowMicros());
      assertThat(db.book("acct-1", 1, 10, old, "pod-a", a.id(), AccountDb.nowMicros())).isTrue();
      StatementDb.Activation b = db.activate("acct-1", renewed, "pod-b", AccountDb.nowMicros());
      assertThat(b.total()).isEqualTo(10);
      Ledger ledger = new Ledger();
      ledger.sent();
      ledger.acked(1, "acct-1", 10);
      assertThat(StatementAudit.of(ledger, url).ok()).isTrue();

      // The old activation's handler starts after the renewed one started: two live instances.
      assertThatThrownBy(() -> db.book("acct-1", 2, 5, old, "pod-a", a.id(), AccountDb.nowMicros() + 1_000_000))
          .isInstanceOf(StatementDb.StaleTokenException.class);
      assertThatThrownBy(() -> db.activate("acct-1", old, "pod-a", AccountDb.nowMicros()))
          .isInstanceOf(StatementDb.StaleTokenException.class);
      StatementAudit audit = StatementAudit.of(ledger, url);
      assertThat(audit.fencedWrites()).isEqualTo(2);
      assertThat(audit.duplicateActivations()).isPositive();
      assertThat(audit.ok()).isFalse();
    }
  }

  @Test
  void aLineDeliveredTwiceIsBookedOnceAndCountedAndALostLineIsFound() throws Exception {
    String url = url();
    try (StatementDb db = new StatementDb(url, 2)) {
      FencingToken t = new FencingToken(61, 3);
      StatementDb.Activation a = db.activate("acct-2", t, "pod-a", AccountDb.nowMicros());
      assertThat(db.book("acct-2", 5, 10, t, "pod-a", a.id(), AccountDb.nowMicros())).isTrue();
      assertThat(db.book("acct-2", 5, 10, t, "pod-a", a.id(), AccountDb.nowMicros())).isFalse();
      assertThat(db.activate("acct-2", new FencingToken(61, 4), "pod-b", AccountDb.nowMicros()).total())
          .isEqualTo(10);

      Ledger ledger = new Ledger();
      ledger.acked(5, "acct-2", 10);
      ledger.acked(6, "acct-2", 1); // acknowledged, never booked
      StatementAudit audit = StatementAudit.of(ledger, url);
      assertThat(audit.duplicateLines()).isEqualTo(1);
      assertThat(audit.lost()).isEqualTo(1);
      assertThat(audit.unbalanced()).isZero();
      assertThat(audit.activations()).isEqualTo(2);
      assertThat(audit.ok()).isFalse();
    }
  }
}
