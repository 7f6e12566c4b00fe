package io.atoll.kv.internal.persist;

import io.atoll.kv.KvPersistence;
import io.atoll.kv.internal.command.CommandLog;
import io.atoll.kv.internal.command.Dispatcher;
import io.atoll.kv.internal.store.Entry;
import io.atoll.kv.internal.store.Key;
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
public final class AppendOnlyFile extends RecordJournal implements CommandLog, AutoCloseable {
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
  private volatile Manifest manifest; // replaced under flushLock; read by INFO and the timer too
  private volatile io.atoll.kv.internal.store.SlotStore store;
  private final java.util.concurrent.atomic.AtomicBoolean rewriting = new java.util.concurrent.atomic.AtomicBoolean();
  private volatile long rewrites;
  private volatile Thread rewriter;
  private volatile long lastRewriteMillis = -1;
  private volatile long rewriteStartedNanos;
  private volatile boolean lastRewriteOk = true;
  /** The log's size after the last rewrite, or at start: an automatic rewrite waits for it to double. */
  private volatile long rewriteBaseSize;
  /** Redis' auto-aof-rewrite-min-size: no automatic rewrite below this. */
  static final long AUTO_REWRITE_MIN_SIZE = 64L << 20;
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
      removeStale(dir, "temp-rewriteaof-", ".aof"); // a rewrite's base that a crash left half written
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

  /**
   * Deletes the files in {@code dir} named {@code prefix*suffix}: temporary files of a rewrite or a
   * save that a crash interrupted. No manifest names them, so they are never loaded; left, they
   * would fill the disk one crash at a time.
   */
  static void removeStale(Path dir, String prefix, String suffix) throws IOException {
    try (java.util.stream.Stream<Path> files = Files.list(dir)) {
      for (Path f : (Iterable<Path>) files::iterator) {
        String n = f.getFileName().toString();
        if (n.startsWith(prefix) && n.endsWith(suffix) && Files.isRegularFile(f)) {
          Files.deleteIfExists(f);
          LOG.warn("removed {}, left by a rewrite or save that did not finish", f);
        }
      }
    }
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
    long skipSeq = -1;
    long[] skipBefore = null;
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
          LogReader.Next n;
          while ((n = r.next()) instanceof LogReader.Record rec) {
            long start = rec.start();
            if (f.type() == 'b' && isBaseOf(rec.args())) {
              skipSeq = Long.parseLong(new String(rec.args()[1], StandardCharsets.US_ASCII));
              skipBefore = new long[rec.args().length - 2];
              for (int s = 0; s < skipBefore.length; s++) {
                skipBefore[s] = Long.parseLong(new String(rec.args()[2 + s], StandardCharsets.US_ASCII));
              }
            } else if (f.type() == 'i' && f.seq() == skipSeq && start < skipBefore[slotOf(rec.args())]) {
              // in the base already: its slot was copied after this record
            } else {
              records++;
              replay(replay, p, rec);
            }
          }
          if (!(n instanceof LogReader.End)) {
            long cut = Recovery.crashTail(p, n);
            if (cut < 0 || !last) {
              throw n instanceof LogReader.Corrupt c
                  ? corrupt(p, c.offset(), c.what() + " (in the record at offset " + c.recordStart() + ")")
                  : corrupt(p, ((LogReader.Truncated) n).validUpTo(), last
                      ? "the file ends inside a record, but valid records follow it"
                      : "a file before the last ends inside a record");
            }
            LOG.warn("appendonly: !!! Truncating the AOF {} at offset {} !!! ({} bytes of a record a crash cut"
                + " short, or zeros a crash of the machine left)", p, cut, size - cut);
            try (FileChannel ch = FileChannel.open(p, StandardOpenOption.WRITE)) {
              ch.truncate(cut);
              ch.force(true);
            }
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
    rewriteBaseSize = totalSize();
    loading = false;
    // A thread of its own: never interrupted mid-write (that would close the channel for good), and
    // never waiting behind a slot lock that MIGRATE holds, as the expiry thread may.
    timer.scheduleWithFixedDelay(this::tick, 1000, 1000, TimeUnit.MILLISECONDS);
    LOG.info("appendonly: DB loaded from append only file: {} records in {} ms", records,
        TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - t0));
  }

  private static void replay(Replay replay, Path p, LogReader.Record rec) {
    try {
      replay.apply(rec.args());
    } catch (RuntimeException e) {
      // The data would differ from what was acknowledged: refuse, as Redis does.
      throw new IllegalStateException("appendonly: " + p + ": the record ending at offset " + rec.end()
          + " ('" + new String(rec.args()[0], StandardCharsets.UTF_8) + "') does not apply: "
          + e.getMessage() + " (a setting lowered since it was written, e.g. --proto-max-bulk-len?)", e);
    }
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
    appendLock.lock();
    try {
      SlotCopy.encode(pending, key, entry);
      advance();
    } finally {
      appendLock.unlock();
    }
  }

  @Override
  protected void record(byte[]... args) {
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
  // Rewriting (BGREWRITEAOF)

  /** The store whose slots a rewrite copies; set once, before the first rewrite. */
  public void attach(io.atoll.kv.internal.store.SlotStore slots) {
    this.store = slots;
  }

  @Override
  public String rewrite() {
    if (store == null || loading || fatal) {
      throw new io.atoll.kv.internal.command.CommandError("ERR the append only file cannot be rewritten now ("
          + (fatal ? "it failed" : "it is loading") + ")");
    }
    if (!rewriting.compareAndSet(false, true)) {
      throw new io.atoll.kv.internal.command.CommandError("ERR Background append only file rewriting already in"
          + " progress");
    }
    startRewriter();
    return "Background append only file rewriting started";
  }

  /** Starts {@link #rewriteNow} on a thread of its own; the caller has set {@code rewriting}. */
  private void startRewriter() {
    rewriter = Thread.ofPlatform().name("kv-appendonly-rewrite").daemon(true).start(this::rewriteNow);
  }

  private static boolean isBaseOf(byte[][] args) {
    return args.length == 2 + io.atoll.core.slots.KeySlots.SLOT_COUNT
        && new String(args[0], StandardCharsets.US_ASCII).equalsIgnoreCase(BASE_OF_NAME);
  }

  /**
   * Rewrites the log: a new increment file takes the appends from now on; every slot is copied in
   * turn, holding its lock only while its entries are encoded, into a new base file, which ends with
   * the offset the new increment file had reached when each slot was copied. Records of a slot
   * before its offset are in the base already, and a load skips them: so writers wait for no more
   * than one slot's copy, and no fork is needed. The new base and increment replace the old files
   * in the manifest only once the base is synced; a crash before that loads the old files and the
   * new increment, whole. Runs on its own thread, one at a time.
   */
  void rewriteNow() {
    rewriteStartedNanos = System.nanoTime();
    boolean ok = false;
    Path tmp = null;
    try {
      Manifest.Entry incr;
      long fileStart;
      synchronized (flushLock) {
        if (fatal || channel == null || !writePending()) {
          return;
        }
        channel.force(false);
        synced = written;
        incr = new Manifest.Entry(Manifest.PREFIX + manifest.nextSeq('i') + ".incr.aof", manifest.nextSeq('i'), 'i');
        FileChannel next = FileChannel.open(dir.resolve(incr.name()), StandardOpenOption.CREATE,
            StandardOpenOption.WRITE, StandardOpenOption.TRUNCATE_EXISTING);
        Manifest m = manifest.with(incr);
        try {
          m.write(dir);
        } catch (IOException e) {
          next.close();
          throw e;
        }
        manifest = m;
        channel.close();
        channel = next;
        fileStart = written;
        LOG.info("appendonly: creating AOF incr file {} on background rewrite", incr.name());
      }
      long baseSeq = manifest.nextSeq('b');
      tmp = dir.resolve("temp-rewriteaof-" + baseSeq + ".aof");
      long[] from = new long[io.atoll.core.slots.KeySlots.SLOT_COUNT];
      long now = System.currentTimeMillis();
      try (FileChannel out = FileChannel.open(tmp, StandardOpenOption.CREATE, StandardOpenOption.WRITE,
          StandardOpenOption.TRUNCATE_EXISTING)) {
        // every record of a slot before its offset is in the copy
        SlotCopy.copy(store, now, out, s -> from[s] = appended - fileStart);
        byte[][] trailer = new byte[2 + from.length][];
        trailer[0] = BASE_OF_NAME.getBytes(StandardCharsets.US_ASCII);
        trailer[1] = SlotCopy.ascii(incr.seq());
        for (int s = 0; s < from.length; s++) {
          trailer[2 + s] = SlotCopy.ascii(from[s]);
        }
        LogBuffer buf = new LogBuffer(64 << 10);
        buf.record(trailer);
        SlotCopy.writeAll(out, buf.view());
        out.force(true);
      }
      Manifest.Entry base = new Manifest.Entry(Manifest.PREFIX + baseSeq + ".base.aof", baseSeq, 'b');
      Files.move(tmp, dir.resolve(base.name()), java.nio.file.StandardCopyOption.ATOMIC_MOVE,
          java.nio.file.StandardCopyOption.REPLACE_EXISTING);
      tmp = null;
      Manifest.syncDirectory(dir);
      List<Manifest.Entry> gone = new ArrayList<>();
      synchronized (flushLock) {
        List<Manifest.Entry> kept = new ArrayList<>();
        kept.add(base);
        for (Manifest.Entry e : manifest.files()) {
          if (e.type() == 'i' && e.seq() >= incr.seq()) {
            kept.add(e);
          } else {
            gone.add(e);
          }
        }
        Manifest m = new Manifest(kept);
        m.write(dir);
        manifest = m;
      }
      for (Manifest.Entry e : gone) {
        Files.deleteIfExists(dir.resolve(e.name()));
        LOG.info("appendonly: removing the history file {}", e.name());
      }
      rewriteBaseSize = totalSize();
      ok = true;
      LOG.info("appendonly: background AOF rewrite finished successfully in {} ms: base {} ({} bytes)",
          TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - rewriteStartedNanos), base.name(),
          Files.size(dir.resolve(base.name())));
    } catch (IOException | RuntimeException e) {
      LOG.error("appendonly: background AOF rewrite failed: {}", e.toString());
      if (tmp != null) {
        try {
          Files.deleteIfExists(tmp);
        } catch (IOException ignored) {
          // left behind; not in the manifest, so never loaded
        }
      }
    } finally {
      rewrites++;
      lastRewriteOk = ok;
      lastRewriteMillis = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - rewriteStartedNanos);
      rewriting.set(false);
    }
  }

  /**
   * Writes and syncs everything appended so far, whatever the policy: for a change that must be on
   * disk before something else is (a node dropping its keys before it takes a new identity).
   *
   * @return false if the log cannot be written or synced
   */
  public boolean syncNow() {
    long target = appended;
    synchronized (flushLock) {
      if (fatal || written < target && !writePending() || channel == null) {
        return false;
      }
      forceTo(channel, written, false);
      return !fatal && synced >= target;
    }
  }

  /** Whether the log holds nothing at all (no record in any file): it was just switched on. */
  public boolean isEmpty() {
    return totalSize() == 0;
  }

  /**
   * The log was just switched on beside a snapshot (Redis 7 does the same with its RDB): runs
   * {@code loader} (the snapshot's replay) with nothing logged, clients answered -LOADING, then
   * writes every key as the log's base, synchronously. Until the manifest names that base the log
   * stays empty, so a crash meanwhile loads the snapshot again at the next start.
   *
   * @throws IllegalStateException if the base could not be written: the node must not start, since
   *     its next write would make the log non-empty without the snapshot's keys
   */
  public void adoptSnapshot(Runnable loader) {
    loading = true;
    try {
      loader.run();
    } finally {
      loading = false;
    }
    rewriting.set(true);
    rewriteNow();
    if (!lastRewriteOk) {
      throw new IllegalStateException("appendonly: cannot write the snapshot's keys as the base of the log in " + dir
          + " (see the log above); the snapshot is kept, and the next start loads it again");
    }
  }

  /** The bytes of every file the manifest lists. */
  private long totalSize() {
    long n = 0;
    for (Manifest.Entry e : manifest.files()) {
      try {
        n += Files.size(dir.resolve(e.name()));
      } catch (IOException ignored) {
        // counted as empty
      }
    }
    return n;
  }

  // ------------------------------------------------------------------------------------------
  // Writing and syncing

  @Override
  public long position() {
    return appended;
  }

  @Override
  public boolean isLogged(long target) {
    return fatal || writeError != null || (fsync == KvPersistence.Fsync.ALWAYS ? synced >= target : written >= target);
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
    forceTo(channel, written, required);
  }

  /**
   * Syncs {@code ch} and marks the log synced up to {@code upTo}. A failure is final when the
   * policy requires the sync (always); otherwise writes are refused until a sync succeeds again.
   */
  private void forceTo(FileChannel ch, long upTo, boolean required) {
    try {
      ch.force(false);
      synced = upTo;
      if (writeError != null && writeError.startsWith("fsync: ")) {
        writeError = null;
        LOG.warn("appendonly: fsync succeeded again, writes are accepted again");
      }
    } catch (java.nio.channels.ClosedChannelException e) {
      // closed meanwhile by close(), which synced it
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
    SlotCopy.writeAll(channel, b);
  }

  /**
   * The once-a-second chore: writes what is buffered (records no reply waited for, e.g. expired
   * keys' deletions, or a batch whose write failed), and under {@code everysec} syncs.
   */
  public void tick() {
    if (loading || fatal) {
      return;
    }
    long size = totalSize();
    if (store != null && size > AUTO_REWRITE_MIN_SIZE && size >= 2 * rewriteBaseSize && rewriting.compareAndSet(false, true)) {
      LOG.info("appendonly: starting automatic rewriting of AOF on {}% growth", rewriteBaseSize == 0 ? 100
          : (size - rewriteBaseSize) * 100 / rewriteBaseSize);
      startRewriter();
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
    forceTo(ch, upTo, false);
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
    f.add("aof_enabled:1");
    boolean inProgress = rewriting.get();
    f.add("aof_rewrite_in_progress:" + (inProgress ? 1 : 0));
    f.add("aof_rewrite_scheduled:0");
    f.add("aof_last_rewrite_time_sec:" + (lastRewriteMillis < 0 ? -1 : lastRewriteMillis / 1000));
    f.add("aof_current_rewrite_time_sec:" + (inProgress
        ? TimeUnit.NANOSECONDS.toSeconds(System.nanoTime() - rewriteStartedNanos) : -1));
    f.add("aof_last_bgrewrite_status:" + (lastRewriteOk ? "ok" : "err"));
    f.add("aof_rewrites:" + rewrites);
    f.add("aof_last_write_status:" + (ok ? "ok" : "err"));
    f.add("aof_current_size:" + totalSize());
    f.add("aof_base_size:" + rewriteBaseSize);
    f.add("aof_buffer_length:" + Math.max(0, appended - written));
    return f;
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
      Thread r = rewriter;
      if (r != null) {
        r.join(TimeUnit.SECONDS.toMillis(60)); // a rewrite under way finishes (or fails) first
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


  /** A base's last record: the increment file it precedes, and per slot the offset its copy was taken at. */
  static final String BASE_OF_NAME = "ATOLL-BASE-OF";
}
