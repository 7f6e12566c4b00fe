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
}
