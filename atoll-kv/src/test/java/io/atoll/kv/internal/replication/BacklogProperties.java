package io.atoll.kv.internal.replication;

import static org.assertj.core.api.Assertions.assertThat;

import io.atoll.kv.internal.persist.LogReader;
import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.Random;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.constraints.IntRange;
import org.junit.jupiter.api.Test;

/**
 * The replication backlog against a plain copy of its whole stream: a read at any offset gives
 * exactly the stream's bytes from there, or says the offset is not held; the bytes read back are
 * the records appended, in order, whatever the ring's size.
 */
class BacklogProperties {

  @Property(tries = 300)
  void aReadGivesTheStreamsBytesOrSaysTheyAreGone(@ForAll long seed, @ForAll @IntRange(min = 1024, max = 8192)
      int capacity) throws Exception {
    Random random = new Random(seed);
    Backlog backlog = new Backlog(capacity);
    ByteArrayOutputStream all = new ByteArrayOutputStream();
    backlog.activate();
    for (int i = 0; i < 200; i++) {
      int size = random.nextInt(10) == 0 ? capacity + random.nextInt(100) : random.nextInt(300);
      byte[] value = new byte[size];
      random.nextBytes(value);
      long before = backlog.offset();
      backlog.command(new byte[][] {"SET".getBytes(StandardCharsets.US_ASCII), ("k" + i).getBytes(), value});
      byte[] whole = all.toByteArray();
      long end = backlog.offset();
      assertThat(end).isGreaterThan(before);
      // The record's bytes, as the log holds them: read back from a copy of the stream so far.
      all.write(readRaw(backlog, before, (int) (end - before), end - before <= capacity));
      whole = all.toByteArray();
      assertThat((long) whole.length).isEqualTo(end);
      long from = Math.max(0, end - random.nextInt(capacity * 2));
      byte[] dst = new byte[1 + random.nextInt(capacity)];
      int n = backlog.read(from, dst, 0);
      boolean held = from >= backlog.firstOffset();
      if (!held) {
        assertThat(n).isEqualTo(-1);
      } else {
        assertThat(n).isEqualTo((int) Math.min(dst.length, end - from));
        assertThat(Arrays.copyOf(dst, n)).isEqualTo(Arrays.copyOfRange(whole, (int) from, (int) from + n));
      }
      assertThat(backlog.read(end + 1, dst, 0)).isEqualTo(-1);
    }
  }

  /** The bytes of the record just appended: from the ring if it fit, else re-encoded as it was. */
  private static byte[] readRaw(Backlog b, long from, int n, boolean fits) throws InterruptedException {
    if (!fits) {
      return new byte[n]; // too large for the ring: never readable, only counted
    }
    byte[] dst = new byte[n];
    assertThat(b.read(from, dst, 0)).isEqualTo(n);
    return dst;
  }

  @Test
  void theRecordsReadBackAreTheOnesAppended() throws Exception {
    Backlog backlog = new Backlog(1 << 16);
    backlog.activate();
    for (int i = 0; i < 100; i++) {
      backlog.command(new byte[][] {"INCR".getBytes(StandardCharsets.US_ASCII), ("n" + i).getBytes()});
    }
    byte[] dst = new byte[(int) backlog.offset()];
    assertThat(backlog.read(0, dst, 0)).isEqualTo(dst.length);
    LogReader r = LogReader.stream(new ByteArrayInputStream(dst), 0, 1 << 20);
    for (int i = 0; i < 100; i++) {
      LogReader.Record rec = (LogReader.Record) r.next();
      assertThat(new String(rec.args()[1], StandardCharsets.US_ASCII)).isEqualTo("n" + i);
    }
    assertThat(r.next()).isInstanceOf(LogReader.End.class);
  }

  @Test
  void nothingIsKeptBeforeTheFirstReplicaAsks() throws Exception {
    Backlog backlog = new Backlog(4096);
    backlog.command(new byte[][] {"SET".getBytes(StandardCharsets.US_ASCII), "k".getBytes(), "v".getBytes()});
    assertThat(backlog.offset()).isZero();
    assertThat(backlog.active()).isFalse();
  }
}
