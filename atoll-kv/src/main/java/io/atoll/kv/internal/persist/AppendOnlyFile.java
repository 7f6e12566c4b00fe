package io.atoll.kv.internal.persist;

import io.atoll.kv.KvPersistence;
import io.atoll.kv.internal.command.CommandLog;
import io.atoll.kv.internal.command.Dispatcher;
import io.atoll.kv.internal.store.Entry;
import io.atoll.kv.internal.store.Key;
import io.atoll.kv.internal.store.SlotJournal;
import java.io.BufferedInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.ReentrantLock;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A node's append-only file, Redis 7's multi-part layout in {@code <data dir>/appendonlydir}: a
 * manifest naming the files, and increment files of records (see {@link LogBuffer}).
 *
 * <p><b>What is logged.</b> A write command whose arguments replay to the same result is logged as
 * it came ({@link #command}); every other change is logged as its effect, from the slot ({@link
 * SlotJournal}): a key stored ({@code SET k v [PXAT t]}, or a hash's {@code DEL} and {@code HSET}),
 * removed ({@code DEL}: deleted, expired, moved away by MIGRATE), its expiry ({@code PEXPIREAT},
 * {@code PERSIST}), a slot emptied by FLUSHALL ({@code ATOLL-FLUSHSLOT n}). Records of one slot
 * are appended holding its lock, so they are in the order of the changes; commands never span
 * slots, so the order between slots does not matter.
 *
 * <p><b>When it is written.</b> Appends go to a buffer. Before a reply that follows a write leaves,
 * its connection calls {@link #awaitLogged}: whoever comes first writes everything buffered (for
 * every connection) and, under {@code appendfsync always}, syncs it; the others find their records
 * already written. This is Redis' group commit (one write, and one fsync, per event-loop turn) with
 * any number of event loops. Under {@code everysec} a timer syncs once a second.
 *
 * <p><b>Failures.</b> A write that fails (disk full, an unwritable directory) keeps the records
 * buffered and retries every second; meanwhile the replies waiting for them are not sent (their
 * connections close: the outcome is unknown to the client, never a false acknowledgement) and
 * writes are refused with Redis' {@code -MISCONF Errors writing to the AOF file: ...}; reads go
 * on. A failed fsync under {@code always} is final: nothing more is acknowledged, and {@code
 * onFatal} runs (the node stops), as Redis exits.
 */
public final class AppendOnlyFile implements SlotJournal, CommandLog, AutoCloseable {
  private static final Logger LOG = LoggerFactory.getLogger(AppendOnlyFile.class);
  /** The directory in the data directory, Redis' {@code appenddirname}. */
  public static final String DIR = "appendonlydir";

  private final Path dir;
  private final KvPersistence.Fsync fsync;
  private final Runnable onFatal;

  private final ReentrantLock appendLock = new ReentrantLock();
  private LogBuffer pending = new LogBuffer(64 << 10); // guarded by appendLock
  private LogBuffer spare = new LogBuffer(64 << 10); // the flusher's
  private volatile long appended; // bytes appended since start, written or not
  private final Object flushLock = new Object();
  private volatile long written;
  private volatile long synced;
  private volatile boolean loading = true;
  private volatile String writeError;
  private volatile boolean fatal;
  private volatile long lastWriteFailureLog;
  private FileChannel channel; // guarded by flushLock
  private LogBuffer unwritten; // a batch whose write failed, written first next time; flushLock
  private Manifest manifest;
  private final long startedAt = System.currentTimeMillis();
  private final java.util.concurrent.ScheduledExecutorService timer =
      java.util.concurrent.Executors.newSingleThreadScheduledExecutor(r -> {
        Thread t = new Thread(r, "kv-appendonly");
        t.setDaemon(true);
        return t;
      });

  private AppendOnlyFile(Path dir, KvPersistence.Fsync fsync, Runnable onFatal) {
    this.dir = dir;
    this.fsync = fsync;
    this.onFatal = onFatal;
  }

  /**
   * Opens the log in {@code dataDir}: reads its manifest, or starts one. Nothing is appended before
   * {@link #load} has replayed it.
   *
   * @throws IllegalStateException if the directory cannot be made or the manifest is malformed
   */
  public static AppendOnlyFile open(Path dataDir, KvPersistence.Fsync fsync, Runnable onFatal) {
    Path dir = dataDir.resolve(DIR);
    AppendOnlyFile aof = new AppendOnlyFile(dir, fsync, onFatal);
    try {
      Files.createDirectories(dir);
      Path m = dir.resolve(Manifest.NAME);
      if (Files.exists(m)) {
        aof.manifest = Manifest.read(m);
      } else {
        aof.manifest = Manifest.fresh();
        Files.write(dir.resolve(aof.manifest.current().name()), new byte[0], StandardOpenOption.CREATE,
            StandardOpenOption.WRITE);
        aof.manifest.write(dir);
        LOG.info("appendonly: a new log in {} (appendfsync {})", dir, fsync.redisName());
      }
    } catch (IOException e) {
      throw new IllegalStateException("appendonly: cannot open the log in " + dir + ": " + e.getMessage()
          + " (expected: a writable data directory)", e);
    }
    return aof;
  }

  /** Replays one record; a {@link RuntimeException} counts as a record that did not apply. */
  @FunctionalInterface
  public interface Replay {
    void apply(byte[][] args);
  }

  /**
   * Replays every file of the manifest through {@code replay}, then opens the last one for
   * appending. A last file that ends inside a record (a crash while writing it) is cut before that
   * record, with a warning naming the offset; anything else malformed refuses to start.
   *
   * @throws IllegalStateException naming the file and offset of a malformed record, with the remedy
   */
  public void load(Replay replay) {
    long t0 = System.nanoTime();
    long records = 0;
    List<Manifest.Entry> files = manifest.loadOrder();
    try {
      for (int i = 0; i < files.size(); i++) {
        Manifest.Entry f = files.get(i);
        boolean last = i == files.size() - 1;
        Path p = dir.resolve(f.name());
        if (!Files.exists(p)) {
          throw new IllegalStateException("appendonly: " + p + " is listed in the manifest but missing");
        }
        long size = Files.size(p);
        try (InputStream in = new BufferedInputStream(Files.newInputStream(p), 1 << 16)) {
          LogReader r = new LogReader(in, 0, size);
          while (true) {
            LogReader.Next n = r.next();
            if (n instanceof LogReader.Record rec) {
              records++;
              try {
                replay.apply(rec.args());
              } catch (RuntimeException e) {
                // The data would differ from what was acknowledged: refuse, as Redis does.
                throw new IllegalStateException("appendonly: " + p + ": the record ending at offset " + rec.end()
                    + " ('" + new String(rec.args()[0], StandardCharsets.UTF_8) + "') does not apply: "
                    + e.getMessage() + " (a setting lowered since it was written, e.g. --proto-max-bulk-len?)", e);
              }
              continue;
            }
            long cut = n instanceof LogReader.Truncated t ? t.validUpTo()
                : n instanceof LogReader.Corrupt c && Recovery.zerosFrom(p, c.recordStart()) ? c.recordStart() : -1;
            if (cut >= 0 && last && !Recovery.moreRecordsAfter(p, cut)) {
              long validUpTo = cut;
              LOG.warn("appendonly: !!! Truncating the AOF {} at offset {} !!! ({} bytes of a record a crash cut"
                  + " short, or zeros a crash of the machine left)", p, validUpTo, size - validUpTo);
              try (FileChannel ch = FileChannel.open(p, StandardOpenOption.WRITE)) {
                ch.truncate(validUpTo);
                ch.force(true);
              }
            } else if (n instanceof LogReader.Truncated t) {
              throw corrupt(p, t.validUpTo(), last ? "the file ends inside a record, but valid records follow it"
                  : "a file before the last ends inside a record");
            } else if (n instanceof LogReader.Corrupt c) {
              throw corrupt(p, c.offset(), c.what() + " (in the record at offset " + c.recordStart() + ")");
            }
            break;
          }
        }
      }
      Manifest.Entry current = manifest.current();
      Path cur = dir.resolve(current.name());
      channel = FileChannel.open(cur, StandardOpenOption.CREATE, StandardOpenOption.WRITE);
      channel.position(channel.size());
    } catch (IOException e) {
      throw new IllegalStateException("appendonly: cannot read the log in " + dir + ": " + e.getMessage(), e);
    }
    loading = false;
    // A thread of its own: never interrupted mid-write (that would close the channel for good), and
    // never waiting behind a slot lock that MIGRATE holds, as the expiry thread may.
    timer.scheduleWithFixedDelay(this::tick, 1000, 1000, TimeUnit.MILLISECONDS);
    LOG.info("appendonly: DB loaded from append only file: {} records in {} ms", records,
        TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - t0));
  }

  private IllegalStateException corrupt(Path p, long offset, String what) {
    return new IllegalStateException("appendonly: " + p + " is corrupt at offset " + offset + ": " + what
        + ". The node does not start on a log it cannot trust. Keep a copy of " + dir + ", then see what is wrong"
        + " with 'atoll kv-check-aof " + dir.resolve(Manifest.NAME) + "' (and cut the file there with --fix,"
        + " losing what follows)");
  }

  // ------------------------------------------------------------------------------------------
  // Appending

  @Override
  public void command(byte[][] args) {
    record(args);
  }

  private long base; // bytes appended before pending's first byte; appendLock

  private void advance() {
    appended = base + pending.length();
  }

  @Override
  public void stored(int slot, Key key, Entry entry) {
    if (loading) {
      return;
    }
    byte[] k = key.bytes();
    appendLock.lock();
    try {
      if (entry.isString()) {
        if (entry.expireAt == 0) {
          pending.record(SET, k, entry.string());
        } else {
          pending.record(SET, k, entry.string(), PXAT, ascii(entry.expireAt));
        }
      } else {
        // One record, so a crash cannot leave the key half replaced (DEL and HSET would be two).
        Map<Key, byte[]> h = entry.hash();
        byte[][] args = new byte[3 + 2 * h.size()][];
        args[0] = SET_HASH;
        args[1] = k;
        args[2] = ascii(entry.expireAt);
        int i = 3;
        for (Map.Entry<Key, byte[]> f : h.entrySet()) {
          args[i++] = f.getKey().bytes();
          args[i++] = f.getValue();
        }
        pending.record(args);
      }
      advance();
    } finally {
      appendLock.unlock();
    }
  }

  @Override
  public void removed(int slot, Key key) {
    record(DEL, key.bytes());
  }

  @Override
  public void expiry(int slot, Key key, long at) {
    if (at == 0) {
      record(PERSIST, key.bytes());
    } else {
      record(PEXPIREAT, key.bytes(), ascii(at));
    }
  }

  @Override
  public void cleared(int slot) {
    record(FLUSH_SLOT, ascii(slot));
  }

  private void record(byte[]... args) {
    if (loading) {
      return;
    }
    appendLock.lock();
    try {
      pending.record(args);
      advance();
    } finally {
      appendLock.unlock();
    }
  }

  // ------------------------------------------------------------------------------------------
  // Writing and syncing

  @Override
  public long position() {
    return appended;
  }

  @Override
  public boolean awaitLogged(long target) {
    if (fsync == KvPersistence.Fsync.ALWAYS ? synced >= target : written >= target) {
      return !fatal;
    }
    synchronized (flushLock) {
      if (fatal) {
        return false;
      }
      if (written < target && !writePending()) {
        return false;
      }
      if (fsync == KvPersistence.Fsync.ALWAYS && synced < target) {
        sync(true);
      }
      return !fatal && (fsync != KvPersistence.Fsync.ALWAYS || synced >= target);
    }
  }

  /** Writes what is buffered (after a batch whose write failed); false if the write failed. Holds flushLock. */
  private boolean writePending() {
    if (channel == null) {
      return false;
    }
    LogBuffer batch;
    long end;
    appendLock.lock();
    try {
      batch = pending;
      end = base + pending.length();
      base = end;
      pending = spare;
      spare = null;
    } finally {
      appendLock.unlock();
    }
    long sizeBefore = -1;
    try {
      sizeBefore = channel.size();
      if (unwritten != null) {
        writeAll(unwritten.view());
      }
      writeAll(batch.view());
    } catch (IOException e) {
      failedWrite(e, sizeBefore, batch);
      return false;
    }
    if (unwritten != null) {
      unwritten = null;
    }
    batch.clear();
    spare = batch;
    written = end;
    if (writeError != null) {
      writeError = null;
      LOG.warn("appendonly: AOF write error looks solved, writes are accepted again");
    }
    return true;
  }

  private void failedWrite(IOException e, long sizeBefore, LogBuffer batch) {
    try {
      if (sizeBefore < 0) {
        throw new IOException("the file's size is unknown");
      }
      channel.truncate(sizeBefore); // no half record stays behind a later one
      channel.position(sizeBefore);
    } catch (IOException t) {
      // Written again later, a batch partly written now would be in the file twice.
      fail("after a failed write, the file cannot be cut back to its last whole record (" + t.getMessage()
          + "); error writing to the AOF file: " + e.getMessage());
      return;
    }
    if (unwritten == null) {
      unwritten = batch;
    } else {
      LogBuffer merged = new LogBuffer(unwritten.length() + batch.length());
      merged.appendRaw(unwritten);
      merged.appendRaw(batch);
      unwritten = merged;
    }
    spare = new LogBuffer(64 << 10);
    writeError = e.getMessage() == null ? e.toString() : e.getMessage();
    long now = System.nanoTime();
    if (now - lastWriteFailureLog > TimeUnit.SECONDS.toNanos(30) || lastWriteFailureLog == 0) {
      lastWriteFailureLog = now;
      LOG.error("appendonly: error writing to the AOF file {}: {}; writes are refused (MISCONF) until a retry"
          + " succeeds, reads go on", dir, writeError);
    }
    if (fsync == KvPersistence.Fsync.ALWAYS) {
      fail("can't recover from AOF write error when the AOF fsync policy is 'always': " + writeError);
    }
  }

  private void sync(boolean required) {
    try {
      long upTo = written;
      channel.force(false);
      synced = upTo;
    } catch (IOException e) {
      if (required) {
        fail("can't persist AOF for fsync error when the AOF fsync policy is 'always': " + e.getMessage());
      } else {
        writeError = "fsync: " + e.getMessage();
        LOG.error("appendonly: fail to fsync the AOF file: {}", e.getMessage());
      }
    }
  }

  private void fail(String why) {
    fatal = true;
    writeError = why;
    LOG.error("appendonly: {}; this node acknowledges nothing more and stops", why);
    onFatal.run();
  }

  private void writeAll(ByteBuffer b) throws IOException {
    while (b.hasRemaining()) {
      channel.write(b);
    }
  }

  /**
   * The once-a-second chore: writes what is buffered (records no reply waited for, e.g. expired
   * keys' deletions, or a batch whose write failed), and under {@code everysec} syncs.
   */
  public void tick() {
    if (loading || fatal) {
      return;
    }
    long upTo;
    FileChannel ch;
    synchronized (flushLock) {
      if (written < appended || unwritten != null) {
        if (!writePending()) {
          return;
        }
      }
      if (fsync != KvPersistence.Fsync.EVERYSEC || synced >= written || channel == null) {
        return;
      }
      upTo = written;
      ch = channel;
    }
    // Outside the lock, as Redis syncs on a background thread: replies waiting to be written are
    // not held up by a slow disk's sync.
    try {
      ch.force(false);
      synced = upTo;
      if (writeError != null && writeError.startsWith("fsync: ")) {
        writeError = null;
        LOG.warn("appendonly: fsync succeeded again, writes are accepted again");
      }
    } catch (java.nio.channels.ClosedChannelException e) {
      // closed meanwhile: close() synced it
    } catch (IOException e) {
      writeError = "fsync: " + e.getMessage();
      LOG.error("appendonly: fail to fsync the AOF file: {}", e.getMessage());
    }
  }

  @Override
  public String writeError() {
    return writeError;
  }

  @Override
  public boolean loading() {
    return loading;
  }

  @Override
  public List<String> info() {
    boolean ok = writeError == null;
    List<String> f = new ArrayList<>();
    f.add("loading:" + (loading ? 1 : 0));
    f.add("async_loading:0");
    f.add("rdb_changes_since_last_save:0");
    f.add("rdb_bgsave_in_progress:0");
    f.add("rdb_last_save_time:" + startedAt / 1000);
    f.add("rdb_last_bgsave_status:ok");
    f.add("aof_enabled:1");
    f.add("aof_rewrite_in_progress:0");
    f.add("aof_rewrite_scheduled:0");
    f.add("aof_last_rewrite_time_sec:-1");
    f.add("aof_current_rewrite_time_sec:-1");
    f.add("aof_last_bgrewrite_status:ok");
    f.add("aof_rewrites:0");
    f.add("aof_last_write_status:" + (ok ? "ok" : "err"));
    f.add("aof_current_size:" + currentSize());
    f.add("aof_buffer_length:" + Math.max(0, appended - written));
    return f;
  }

  private long currentSize() {
    try {
      return Files.size(dir.resolve(manifest.current().name()));
    } catch (IOException e) {
      return -1;
    }
  }

  @Override
  public String appendfsync() {
    return fsync.redisName();
  }

  /** Writes and syncs what is buffered, and closes the file. Idempotent. */
  @Override
  public void close() {
    timer.shutdown(); // not shutdownNow: a tick in a write finishes it
    try {
      if (!timer.awaitTermination(10, TimeUnit.SECONDS)) {
        LOG.warn("appendonly: the once-a-second chore did not end within 10 s");
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
    synchronized (flushLock) {
      if (channel == null) {
        return;
      }
      if (!fatal && !loading) {
        if (writePending()) {
          sync(false);
        }
      }
      try {
        channel.close();
      } catch (IOException e) {
        LOG.warn("appendonly: closing {}: {}", dir, e.getMessage());
      }
      channel = null;
    }
  }

  private static byte[] ascii(long n) {
    return Long.toString(n).getBytes(StandardCharsets.US_ASCII);
  }

  private static final byte[] SET = "SET".getBytes(StandardCharsets.US_ASCII);
  private static final byte[] PXAT = "PXAT".getBytes(StandardCharsets.US_ASCII);
  private static final byte[] DEL = "DEL".getBytes(StandardCharsets.US_ASCII);
  private static final byte[] SET_HASH = Dispatcher.SET_HASH.toUpperCase(java.util.Locale.ROOT)
      .getBytes(StandardCharsets.US_ASCII);
  private static final byte[] PEXPIREAT = "PEXPIREAT".getBytes(StandardCharsets.US_ASCII);
  private static final byte[] PERSIST = "PERSIST".getBytes(StandardCharsets.US_ASCII);
  private static final byte[] FLUSH_SLOT = Dispatcher.FLUSH_SLOT.toUpperCase(java.util.Locale.ROOT)
      .getBytes(StandardCharsets.US_ASCII);
}
