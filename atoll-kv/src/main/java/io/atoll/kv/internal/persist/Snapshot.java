package io.atoll.kv.internal.persist;

import io.atoll.kv.internal.command.CommandError;
import io.atoll.kv.internal.command.Snapshots;
import io.atoll.kv.internal.store.SlotStore;
import java.io.BufferedInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.LongSupplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A node's snapshot, {@code <data dir>/dump.atoll}: every key, in the append-only file's record
 * format, ending with {@code ATOLL-SNAPSHOT <records>}. The role of Redis' {@code dump.rdb}: SAVE,
 * BGSAVE and SHUTDOWN SAVE write it, and a node without an append-only file loads it at start (with
 * one, the log is what it loads, as Redis does).
 *
 * <p><b>Writing.</b> Each slot is copied under its lock (see {@link SlotCopy}), so writers wait for
 * one slot's copy at most and no fork is needed; every write acknowledged before the save began is
 * in it. The copy goes to {@code temp-<pid>.atoll}, is synced, renamed over the snapshot and the
 * directory synced: a crash leaves the old snapshot or the new one, never a part. One save at a
 * time.
 *
 * <p><b>Loading.</b> A snapshot must be whole: every record's checksum must hold and the last record
 * must be the trailer counting them. Anything else refuses the start, naming the file and the
 * offset: unlike a log's tail, a snapshot is never legitimately cut short.
 */
public final class Snapshot implements Snapshots {
  private static final Logger LOG = LoggerFactory.getLogger(Snapshot.class);
  /** The file in the data directory. */
  public static final String NAME = "dump.atoll";
  static final String TRAILER = "ATOLL-SNAPSHOT";

  private final Path dataDir;
  private final SlotStore store;
  private final LongSupplier writes;
  private final AtomicBoolean saving = new AtomicBoolean();
  private volatile long lastSaveMillis;
  private volatile long writesAtLastSave;
  private volatile boolean lastOk = true;
  private volatile long lastSaveTookMillis = -1;
  private volatile long startedNanos;
  private volatile long saves;
  private volatile Thread background;

  /**
   * @param writes the writes executed since start (a save counts the changes since it by them)
   * @param startedAtMillis when the node started: LASTSAVE until the first save
   */
  public Snapshot(Path dataDir, SlotStore store, LongSupplier writes, long startedAtMillis) {
    this.dataDir = dataDir;
    this.store = store;
    this.writes = writes;
    this.lastSaveMillis = startedAtMillis;
    if (Files.isDirectory(dataDir)) {
      try {
        AppendOnlyFile.removeStale(dataDir, "temp-", ".atoll"); // a save a crash interrupted
      } catch (IOException e) {
        LOG.warn("snapshot: could not look for stale temporary files in {}: {}", dataDir, e.toString());
      }
    }
  }

  @Override
  public void save() {
    if (!saving.compareAndSet(false, true)) {
      throw new CommandError("ERR Background save already in progress");
    }
    try {
      write();
    } catch (IOException e) {
      throw new CommandError("ERR the snapshot could not be written to " + dataDir.resolve(NAME) + ": " + e);
    } finally {
      saving.set(false);
    }
  }

  @Override
  public String bgsave() {
    if (!saving.compareAndSet(false, true)) {
      throw new CommandError("ERR Background save already in progress");
    }
    background = Thread.ofPlatform().name("kv-bgsave").daemon(true).start(() -> {
      try {
        write();
      } catch (IOException | RuntimeException e) {
        LOG.error("snapshot: background saving failed: {}", e.toString());
      } finally {
        saving.set(false);
      }
    });
    return "Background saving started";
  }

  private void write() throws IOException {
    startedNanos = System.nanoTime();
    long writesAt = writes.getAsLong();
    Path tmp = dataDir.resolve("temp-" + ProcessHandle.current().pid() + ".atoll");
    boolean ok = false;
    try {
      Files.createDirectories(dataDir);
      long records;
      try (FileChannel out = FileChannel.open(tmp, StandardOpenOption.CREATE, StandardOpenOption.WRITE,
          StandardOpenOption.TRUNCATE_EXISTING)) {
        records = SlotCopy.copy(store, System.currentTimeMillis(), out, s -> { });
        LogBuffer end = new LogBuffer(64);
        end.record(TRAILER.getBytes(StandardCharsets.US_ASCII), SlotCopy.ascii(records));
        SlotCopy.writeAll(out, end.view());
        out.force(true);
      }
      Files.move(tmp, dataDir.resolve(NAME), StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
      Manifest.syncDirectory(dataDir);
      ok = true;
      lastSaveMillis = System.currentTimeMillis();
      writesAtLastSave = writesAt;
      LOG.info("snapshot: DB saved on disk: {} keys in {} ms ({})", records,
          TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - startedNanos), dataDir.resolve(NAME));
    } finally {
      if (!ok) {
        Files.deleteIfExists(tmp);
      }
      lastOk = ok;
      saves++;
      lastSaveTookMillis = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - startedNanos);
    }
  }

  @Override
  public long lastSave() {
    return lastSaveMillis / 1000;
  }

  @Override
  public List<String> info() {
    boolean inProgress = saving.get();
    List<String> f = new ArrayList<>();
    f.add("rdb_changes_since_last_save:" + Math.max(0, writes.getAsLong() - writesAtLastSave));
    f.add("rdb_bgsave_in_progress:" + (inProgress ? 1 : 0));
    f.add("rdb_last_save_time:" + lastSave());
    f.add("rdb_last_bgsave_status:" + (lastOk ? "ok" : "err"));
    f.add("rdb_last_bgsave_time_sec:" + (lastSaveTookMillis < 0 ? -1 : lastSaveTookMillis / 1000));
    f.add("rdb_current_bgsave_time_sec:" + (inProgress
        ? TimeUnit.NANOSECONDS.toSeconds(System.nanoTime() - startedNanos) : -1));
    f.add("rdb_saves:" + saves);
    return f;
  }

  /** Waits for a background save under way (a node closing lets it finish). */
  public void awaitBackground(long millis) throws InterruptedException {
    Thread t = background;
    if (t != null) {
      t.join(millis);
    }
  }

  /**
   * Replays the snapshot in {@code dataDir}, if there is one, through {@code replay}; returns its
   * records (0 without one).
   *
   * @throws IllegalStateException naming the file and offset if it is not whole
   */
  public static long load(Path dataDir, AppendOnlyFile.Replay replay) {
    Path p = dataDir.resolve(NAME);
    if (!Files.exists(p)) {
      return 0;
    }
    long t0 = System.nanoTime();
    long records = 0;
    try (InputStream in = new BufferedInputStream(Files.newInputStream(p), 1 << 16)) {
      long size = Files.size(p);
      LogReader r = new LogReader(in, 0, size);
      LogReader.Next n;
      LogReader.Record trailer = null;
      while ((n = r.next()) instanceof LogReader.Record rec) {
        if (trailer != null) {
          throw bad(p, trailer.start(), "records follow the trailer");
        }
        if (new String(rec.args()[0], StandardCharsets.US_ASCII).equals(TRAILER)) {
          trailer = rec;
          continue;
        }
        records++;
        try {
          replay.apply(rec.args());
        } catch (RuntimeException e) {
          throw bad(p, rec.start(), "the record ('" + new String(rec.args()[0], StandardCharsets.UTF_8)
              + "') does not apply: " + e.getMessage());
        }
      }
      if (n instanceof LogReader.Corrupt c) {
        throw bad(p, c.offset(), c.what() + " (in the record at offset " + c.recordStart() + ")");
      }
      if (n instanceof LogReader.Truncated t) {
        throw bad(p, t.validUpTo(), "the file ends inside a record");
      }
      if (trailer != null && trailer.args().length != 2) {
        throw bad(p, trailer.start(), "its trailer has " + trailer.args().length + " fields (expected: 2)");
      }
      if (trailer == null) {
        throw bad(p, size, "it ends without its trailer (" + TRAILER + "): it was cut short");
      }
      long counted = Long.parseLong(new String(trailer.args()[1], StandardCharsets.US_ASCII));
      if (counted != records) {
        throw bad(p, trailer.start(), "the trailer counts " + counted + " records, the file holds " + records);
      }
    } catch (IOException e) {
      throw new IllegalStateException("snapshot: cannot read " + p + ": " + e.getMessage(), e);
    } catch (NumberFormatException e) {
      throw bad(p, 0, "its trailer's count is not a number");
    }
    LOG.info("snapshot: DB loaded from {}: {} keys in {} ms", p, records,
        TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - t0));
    return records;
  }

  private static IllegalStateException bad(Path p, long offset, String what) {
    return new IllegalStateException("snapshot: " + p + " is damaged at offset " + offset + ": " + what
        + ". The node does not start on a snapshot it cannot trust: move the file away to start without it");
  }
}
