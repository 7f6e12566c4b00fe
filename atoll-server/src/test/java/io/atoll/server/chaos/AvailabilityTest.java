package io.atoll.server.chaos;

import static org.assertj.core.api.Assertions.assertThat;

import io.atoll.core.ShardHasher;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;

/** The chaos run's unavailability figure, on a virtual clock. */
class AvailabilityTest {

  static final long MS = 1_000_000L;

  /** Two accounts of different shards. */
  private static String[] twoShards(int shards) {
    String a = "acct-0";
    for (int i = 1; ; i++) {
      String b = "acct-" + i;
      if (ShardHasher.DEFAULT.shardOf(a, shards) != ShardHasher.DEFAULT.shardOf(b, shards)) {
        return new String[] {a, b};
      }
    }
  }

  private final AtomicLong now = new AtomicLong(1_000 * MS);
  private final Availability a = new Availability(ShardHasher.DEFAULT, 16, now::get);
  private final String[] acct = twoShards(16);

  /** A window begins, and both shards are acknowledged at once. */
  private void beginWithBothAcked() {
    a.begin();
    a.acked(acct[0]);
    a.acked(acct[1]);
  }

  @Test
  void aWindowCountsTheLongestGapThatEndsInItOrIsStillOpen() {
    beginWithBothAcked();
    now.addAndGet(300 * MS);
    a.acked(acct[0]); // a 300 ms gap, closed
    now.addAndGet(400 * MS);
    assertThat(a.end()).as("the other shard's gap, 700 ms and still open").isEqualTo(700);
  }

  @Test
  void aGapIsCountedFromTheWindowsStartAtTheEarliestSoNoFaultIsChargedForTheOneBefore() {
    beginWithBothAcked();
    now.addAndGet(5_000 * MS); // the first fault: shard of acct[0] gets nothing for 5 s
    a.acked(acct[1]);
    assertThat(a.end()).isEqualTo(5_000);
    a.begin(); // the next fault's window: acct[0]'s shard recovers 200 ms into it
    now.addAndGet(200 * MS);
    a.acked(acct[0]);
    a.acked(acct[1]);
    now.addAndGet(100 * MS);
    assertThat(a.end()).as("200 ms of this window, not the 5.2 s since the shard's last ack").isEqualTo(200);
  }
}
