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

  /** Sends a deposit to {@code account} now; returns its sending time. */
  private long send(String account) {
    long t = now.get();
    a.sent(account, t);
    return t;
  }

  private void later(long millis) {
    now.addAndGet(millis * MS);
  }

  @Test
  void anIdleShardIsNotUnavailableHoweverLongNothingReachesIt() {
    a.begin();
    a.ended(acct[0], send(acct[0]), true);
    later(8_000); // no deposit to either shard for 8 s: the load is sparse, nothing waits
    long t = send(acct[0]);
    later(20);
    a.ended(acct[0], t, true);
    assertThat(a.end()).isEqualTo(20);
  }

  @Test
  void aDepositWaitingWhileItsShardAcknowledgesNothingCountsUntilItEnds() {
    a.begin();
    long first = send(acct[0]);
    later(300);
    a.ended(acct[1], send(acct[1]), true); // the other shard serves meanwhile
    later(400);
    a.ended(acct[0], first, true);
    assertThat(a.end()).isEqualTo(700);
  }

  @Test
  void aFailedDepositCountsAsLongAsItWaitedAndOneStillOutstandingCountsUpToTheWindowsEnd() {
    a.begin();
    long lost = send(acct[0]);
    later(1_500);
    a.ended(acct[0], lost, false); // timed out: 1.5 s without an answer
    long open = send(acct[1]);
    later(2_000);
    assertThat(a.end()).as("the deposit to the other shard has waited 2 s and still waits").isEqualTo(2_000);
    a.begin();
    later(100);
    a.ended(acct[1], open, true);
    assertThat(a.end()).as("counted from the window's start: the earlier window had the first 2 s").isEqualTo(100);
  }

  @Test
  void aSlowDepositOfAShardThatKeepsAcknowledgingOthersCountsOnlySinceTheLastAcknowledgement() {
    a.begin();
    long slow = send(acct[0]);
    for (int i = 0; i < 10; i++) {
      later(100);
      a.ended(acct[0], send(acct[0]), true); // other deposits to the same shard pass it
    }
    later(50);
    a.ended(acct[0], slow, true);
    assertThat(a.end()).as("the shard was serving: only the last 50 ms without an acknowledgement count").isEqualTo(100);
  }

  @Test
  void theLongestSpanNamesItsShardAndWhenItBegan() {
    a.begin();
    later(250);
    long first = send(acct[1]);
    later(900);
    a.ended(acct[0], send(acct[0]), true);
    a.ended(acct[1], first, true);
    Availability.Longest l = a.endWindow();
    assertThat(l.millis()).isEqualTo(900);
    assertThat(l.shard()).isEqualTo(ShardHasher.DEFAULT.shardOf(acct[1], 16));
    assertThat(l.fromMillis()).isEqualTo(250);
    assertThat(l.toString()).isEqualTo("900 ms (shard " + l.shard() + ", from +250 ms)");
  }
}
