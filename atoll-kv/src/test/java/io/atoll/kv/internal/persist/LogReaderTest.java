package io.atoll.kv.internal.persist;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.constraints.IntRange;
import org.junit.jupiter.api.Test;

/**
 * The log reader at the byte level: a file cut at every point reads as its whole records and then
 * a cut tail; a file with any byte changed reads as its records up to the damage and then a
 * refusal. Never a record that was not written.
 */
class LogReaderTest {


  private static byte[] b(String s) {
    return s.getBytes(StandardCharsets.UTF_8);
  }

  /** A log of records of various shapes: empty values, binary bytes, CRLF inside values, many fields. */
  static List<byte[][]> records(long seed, int n) {
    java.util.Random r = new java.util.Random(seed);
    List<byte[][]> out = new ArrayList<>();
    for (int i = 0; i < n; i++) {
      int argc = 1 + r.nextInt(5);
      byte[][] args = new byte[argc][];
      args[0] = b(new String[] {"SET", "DEL", "HSET", "PEXPIREAT", "INCR"}[r.nextInt(5)]);
      for (int a = 1; a < argc; a++) {
        byte[] v = new byte[r.nextInt(4) == 0 ? 0 : r.nextInt(40)];
        r.nextBytes(v);
        if (r.nextInt(5) == 0 && v.length >= 2) {
          v[0] = '\r';
          v[1] = '\n';
        }
        args[a] = v;
      }
      out.add(args);
    }
    return out;
  }

  /** The bytes of {@code records} and the offset where each record ends. */
  record Log(byte[] bytes, long[] ends) {
  }

  static Log encode(List<byte[][]> records) {
    LogBuffer buf = new LogBuffer(16);
    long[] ends = new long[records.size()];
    for (int i = 0; i < records.size(); i++) {
      buf.record(records.get(i));
      ends[i] = buf.length();
    }
    var v = buf.view();
    byte[] bytes = new byte[v.remaining()];
    v.get(bytes);
    return new Log(bytes, ends);
  }

  /** Reads {@code bytes} to the end: the records, then how it ended. */
  record Read(List<byte[][]> records, LogReader.Next end) {
  }

  static Read read(byte[] bytes) throws IOException {
    LogReader r = new LogReader(new ByteArrayInputStream(bytes), 0, bytes.length);
    List<byte[][]> got = new ArrayList<>();
    while (true) {
      LogReader.Next n = r.next();
      if (n instanceof LogReader.Record rec) {
        got.add(rec.args());
      } else {
        return new Read(got, n);
      }
    }
  }

  /**
   * {@code bytes} as a file. Not in a JUnit {@code @TempDir}: jqwik's properties do not get one
   * (it was null there, and a sample that read as a cut tail failed with a NullPointerException).
   */
  private static Path file(byte[] bytes) throws IOException {
    Path p = Files.createTempFile("atoll-logreader", ".aof");
    p.toFile().deleteOnExit();
    Files.write(p, bytes);
    return p;
  }

  @Test
  void aWholeLogReadsBackRecordForRecord() throws IOException {
    List<byte[][]> recs = records(1, 200);
    Read r = read(encode(recs).bytes());
    assertThat(r.end()).isInstanceOf(LogReader.End.class);
    assertThat(r.records()).hasSize(recs.size());
    for (int i = 0; i < recs.size(); i++) {
      assertThat(r.records().get(i)).isDeepEqualTo(recs.get(i));
    }
  }

  @Test
  void cutAtEveryByteItReadsTheWholeRecordsBeforeTheCutThenACutTail() throws IOException {
    List<byte[][]> recs = records(2, 40);
    Log log = encode(recs);
    for (int cut = 0; cut <= log.bytes().length; cut++) {
      byte[] prefix = Arrays.copyOf(log.bytes(), cut);
      Read r = read(prefix);
      int whole = 0;
      while (whole < log.ends().length && log.ends()[whole] <= cut) {
        whole++;
      }
      assertThat(r.records()).as("records before a cut at %d", cut).hasSize(whole);
      for (int i = 0; i < whole; i++) {
        assertThat(r.records().get(i)).isDeepEqualTo(recs.get(i));
      }
      long boundary = whole == 0 ? 0 : log.ends()[whole - 1];
      if (cut == boundary) {
        assertThat(r.end()).as("cut at %d, a record boundary", cut).isEqualTo(new LogReader.End(cut));
      } else {
        assertThat(r.end()).as("cut at %d", cut).isInstanceOf(LogReader.Truncated.class);
        assertThat(((LogReader.Truncated) r.end()).validUpTo()).isEqualTo(boundary);
        assertThat(Recovery.moreRecordsAfter(file(prefix), boundary)).as("a crash's tail at %d", cut).isFalse();
      }
    }
  }

  @Property(tries = 300)
  void anyByteChangedReadsAsTheRecordsBeforeItThenARefusalNeverAWrongRecord(
      @ForAll @IntRange(min = 0, max = 100_000) int position, @ForAll @IntRange(min = 1, max = 255) int xor)
      throws IOException {
    List<byte[][]> recs = records(position, 12);
    Log log = encode(recs);
    int at = position % log.bytes().length;
    byte[] damaged = log.bytes().clone();
    damaged[at] ^= (byte) xor;
    Read r = read(damaged);
    int before = 0;
    while (before < log.ends().length && log.ends()[before] <= at) {
      before++;
    }
    assertThat(r.records().size()).as("records read").isLessThanOrEqualTo(before);
    for (int i = 0; i < r.records().size(); i++) {
      assertThat(r.records().get(i)).as("record %d", i).isDeepEqualTo(recs.get(i));
    }
    // The damaged record's bytes no longer match: the node must refuse, not cut and go on.
    if (r.end() instanceof LogReader.Truncated t) {
      assertThat(Recovery.moreRecordsAfter(file(damaged), t.validUpTo()))
          .as("a damaged length read as a cut tail at %d (byte %d changed)", t.validUpTo(), at).isTrue();
    } else {
      assertThat(r.end()).as("byte %d changed", at).isInstanceOf(LogReader.Corrupt.class);
    }
  }
}
