package io.atoll.store.file;

import io.atoll.core.spi.AssignmentStore;
import io.atoll.core.spi.StaleTermException;
import io.atoll.core.spi.StoreConflictException;
import io.atoll.core.spi.StoreException;
import io.atoll.core.spi.LeaderWatch;
import io.atoll.core.spi.VersionWatch;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.channels.FileLock;
import java.nio.channels.OverlappingFileLockException;
import java.nio.charset.StandardCharsets;
import java.nio.file.AtomicMoveNotSupportedException;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;
import java.time.Duration;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.ReentrantLock;
import java.util.function.Consumer;
import java.util.zip.CRC32C;

/**
 * The embedded default {@link AssignmentStore}: files in a data directory, each replaced
 * atomically, for managers on one machine.
 *
 * <p><b>State.</b> A save writes {@code state.tmp}, forces it to disk, renames it over
 * {@code state} (an atomic replace on POSIX file systems) and forces the directory, so after a
 * crash at any point the directory holds either the old or the new state, never a mix. A save
 * returns only once the directory is forced: if it cannot be, the save fails (its outcome
 * ambiguous) rather than report a write that a crash could undo. The file carries its version,
 * its writer's term and a CRC32C; a damaged file is reported, never half-read.
 *
 * <pre>
 * magic "ATLS", format 2 (1 byte), version (8 bytes), term (8 bytes), length (4 bytes), data,
 *   CRC32C of all before (4 bytes)          (format 1, still read, has no term: term 0)
 * </pre>
 *
 * <p><b>Writers.</b> Every change (a save, a grant of a term) happens under an exclusive lock of
 * {@code write.lock} — an OS lock between processes and a per-directory lock between handles of
 * one JVM — and re-reads the stored version and the granted term ({@code term}, checksummed)
 * under it. So any number of handles and processes may open the directory; only the
 * compare-and-set decides.
 *
 * <p><b>Leadership.</b> The lease is an OS lock on {@code leader.lock}, held by the leading handle
 * and released when its lease lapses (its own timer, {@code ttl} after the last grant or renewal),
 * when it is released or closed, and by the OS when its process dies — {@code kill -9} of a
 * leader frees the lease at once. A frozen (stopped) leader keeps it until it runs again: this
 * store is for one machine. {@code leader} names the holder. Handles of one JVM on one directory
 * know which of them holds {@code leader.lock} and open no other channel of it meanwhile: closing
 * any channel of a file drops every OS lock the process holds on it, the leader's too.
 *
 * <p><b>Leader watch.</b> A thread blocks in {@code lock()} on {@code leader.lock} while another
 * process leads, so a standby hears of the leader's release or death the moment the OS frees the
 * lock; a leader in this JVM is waited for on its monitor.
 *
 * <p><b>Watch.</b> Each watch polls the state file's header every {@code pollInterval} (50 ms
 * unless opened otherwise) and reads the state when its version grew.
 *
 * <p>Thread-safe.
 */
public final class FileAssignmentStore implements AssignmentStore {

  static final String STATE = "state";
  static final String TEMP = "state.tmp";
  static final String TERM = "term";
  static final String TERM_TEMP = "term.tmp";
  static final String LEADER = "leader";
  static final String LEADER_TEMP = "leader.tmp";
  static final String LEADER_LOCK = "leader.lock";
  static final String WRITE_LOCK = "write.lock";
  private static final byte[] MAGIC = {'A', 'T', 'L', 'S'};
  private static final byte[] TERM_MAGIC = {'A', 'T', 'L', 'T'};
  private static final byte FORMAT_1 = 1;
  private static final byte FORMAT = 2;
  private static final int HEADER_1 = 4 + 1 + 8 + 4;
  private static final int HEADER = 4 + 1 + 8 + 8 + 4;
  private static final int TERM_FILE = 4 + 8 + 4;
  private static final System.Logger log = System.getLogger(FileAssignmentStore.class.getName());

  /** OS file locks are per process: handles of one JVM on one directory take this first. */
  private static final ConcurrentHashMap<Path, ReentrantLock> WRITERS = new ConcurrentHashMap<>();

  /**
   * Which handle of this JVM holds a directory's {@code leader.lock}. Closing any channel of a file
   * drops every OS (fcntl) lock the process holds on it, so while a handle of this JVM holds it no
   * other handle opens a channel of that file: each asks this first, under its monitor.
   */
  private static final class LeaderFile {
    private FileAssignmentStore holder; // guarded by this
    /** Channels that leader watches of this JVM block on in {@code lock()}; guarded by this. */
    private final java.util.Set<FileChannel> waiting = new java.util.HashSet<>();

    /**
     * Closes the channels leader watches wait on (they open new ones later): a pending lock of
     * this JVM would make every other channel's lock attempt fail as overlapping. Under this.
     */
    void evictWaiters() {
      for (FileChannel ch : waiting) {
        try {
          ch.close(); // wakes the blocked lock(); this JVM holds no lock on the file meanwhile
        } catch (IOException e) {
          // closed anyway
        }
      }
      waiting.clear();
    }
  }

  private static final ConcurrentHashMap<Path, LeaderFile> LEADER_FILES = new ConcurrentHashMap<>();

  /** Forces a directory's entries (a rename into it) to disk. */
  @FunctionalInterface
  interface DirectorySync {
    /** The file system's own: fsync on the directory. */
    DirectorySync FSYNC = dir -> {
      try (FileChannel d = FileChannel.open(dir, StandardOpenOption.READ)) {
        d.force(true);
      }
    };

    void sync(Path dir) throws IOException;
  }

  @FunctionalInterface
  private interface IoBody<T> {
    T run() throws IOException;
  }

  private final Path dir;
  private final DirectorySync directorySync;
  private final Duration pollInterval;
  private final ReentrantLock writers;
  private final LeaderFile leaderFile;
  private final ScheduledExecutorService timer;
  private final ScheduledExecutorService watcher;
  private FileChannel leaderChannel; // guarded by this
  private FileLock leaderLock; // guarded by this
  private Lease held; // guarded by this
  private ScheduledFuture<?> lapse; // guarded by this
  private volatile boolean closed;
  /** This handle's open leader watches, closed with it. */
  private final java.util.Set<Watch> leaderWatches = ConcurrentHashMap.newKeySet();

  private FileAssignmentStore(Path dir, DirectorySync directorySync, Duration pollInterval) {
    this.dir = dir;
    this.directorySync = directorySync;
    this.pollInterval = pollInterval;
    this.writers = WRITERS.computeIfAbsent(dir, d -> new ReentrantLock());
    this.leaderFile = LEADER_FILES.computeIfAbsent(dir, d -> new LeaderFile());
    this.timer = Executors.newSingleThreadScheduledExecutor(
        Thread.ofPlatform().name("atoll-file-store-lease").daemon().factory());
    this.watcher = Executors.newSingleThreadScheduledExecutor(
        Thread.ofPlatform().name("atoll-file-store-watch").daemon().factory());
  }

  /**
   * Opens the store in {@code dir}, creating the directory if needed.
   *
   * @throws StoreException if the directory cannot be created or holds a damaged state file
   */
  public static FileAssignmentStore open(Path dir) {
    return open(dir, DirectorySync.FSYNC, Duration.ofMillis(50));
  }

  /** {@link #open(Path)} with the directory sync and the watch's poll interval given. */
  static FileAssignmentStore open(Path dir, DirectorySync directorySync, Duration pollInterval) {
    Path abs = dir.toAbsolutePath().normalize();
    try {
      Files.createDirectories(abs);
      Path real = abs.toRealPath();
      FileAssignmentStore s = new FileAssignmentStore(real, directorySync, pollInterval);
      try {
        s.underWriteLock(() -> {
          Files.deleteIfExists(real.resolve(TEMP)); // a save that crashed before its rename
          return read(real);
        });
      } catch (RuntimeException e) {
        s.close();
        throw e;
      }
      return s;
    } catch (IOException e) {
      throw new StoreException("file store " + abs + ": cannot open: " + e.getMessage(), e);
    }
  }

  /** {@link #open(Path)} with the directory sync given, for tests that make it fail. */
  static FileAssignmentStore open(Path dir, DirectorySync directorySync) {
    return open(dir, directorySync, Duration.ofMillis(50));
  }

  /**
   * Reads the state in {@code dir} without any lock, for tools and tests that inspect a store
   * another process holds. The result is a complete state (the file is only ever replaced whole).
   *
   * @throws StoreException if the state file is damaged or unreadable
   */
  public static Optional<Stored> read(Path dir) {
    Path file = dir.toAbsolutePath().resolve(STATE);
    byte[] all;
    try {
      all = Files.readAllBytes(file);
    } catch (NoSuchFileException e) {
      return Optional.empty();
    } catch (IOException e) {
      throw new StoreException("file store " + file + ": cannot read: " + e.getMessage(), e);
    }
    return Optional.of(decode(file, all));
  }

  private static Stored decode(Path file, byte[] all) {
    if (all.length < HEADER_1 + 4) {
      throw damaged(file, "length " + all.length + " (expected: >= " + (HEADER_1 + 4) + ")");
    }
    ByteBuffer b = ByteBuffer.wrap(all);
    for (byte m : MAGIC) {
      if (b.get() != m) {
        throw damaged(file, "bad magic (expected: 'ATLS')");
      }
    }
    byte format = b.get();
    if (format != FORMAT && format != FORMAT_1) {
      throw damaged(file, "format " + format + " (expected: " + FORMAT_1 + " or " + FORMAT + ")");
    }
    int header = format == FORMAT ? HEADER : HEADER_1;
    if (all.length < header + 4) {
      throw damaged(file, "length " + all.length + " (expected: >= " + (header + 4) + ")");
    }
    long version = b.getLong();
    long term = format == FORMAT ? b.getLong() : 0;
    int length = b.getInt();
    if (length < 0 || length != all.length - header - 4) {
      throw damaged(file, "data length " + length + " (expected: " + (all.length - header - 4) + ")");
    }
    CRC32C crc = new CRC32C();
    crc.update(all, 0, header + length);
    int stored = ByteBuffer.wrap(all, header + length, 4).getInt();
    if ((int) crc.getValue() != stored) {
      throw damaged(file, "checksum mismatch");
    }
    if (version < 1) {
      throw damaged(file, "version " + version + " (expected: >= 1)");
    }
    if (term < 0) {
      throw damaged(file, "term " + term + " (expected: >= 0)");
    }
    byte[] data = new byte[length];
    System.arraycopy(all, header, data, 0, length);
    return new Stored(version, term, data);
  }

  private static StoreException damaged(Path file, String what) {
    return new StoreException("file store " + file + ": damaged state file: " + what
        + "; restore it from a backup or remove it to start empty");
  }

  /** The stored version, from the state file's header alone (0 when there is none). */
  private long storedVersion() throws IOException {
    Path file = dir.resolve(STATE);
    try (FileChannel ch = FileChannel.open(file, StandardOpenOption.READ)) {
      ByteBuffer b = ByteBuffer.allocate(4 + 1 + 8);
      while (b.hasRemaining() && ch.read(b) >= 0) {
        // reads the header
      }
      if (b.hasRemaining()) {
        throw damaged(file, "length " + b.position() + " (expected: >= " + HEADER_1 + ")");
      }
      return b.getLong(5);
    } catch (NoSuchFileException e) {
      return 0;
    }
  }

  /** The last term granted (0 when none ever was). */
  private long grantedTerm() throws IOException {
    Path file = dir.resolve(TERM);
    byte[] all;
    try {
      all = Files.readAllBytes(file);
    } catch (NoSuchFileException e) {
      return 0;
    }
    ByteBuffer b = ByteBuffer.wrap(all);
    CRC32C crc = new CRC32C();
    crc.update(all, 0, Math.max(0, Math.min(all.length, TERM_FILE - 4)));
    if (all.length != TERM_FILE || b.getInt() != ByteBuffer.wrap(TERM_MAGIC).getInt()
        || b.getInt(TERM_FILE - 4) != (int) crc.getValue()) {
      throw new StoreException("file store " + file + ": damaged term file (expected: " + TERM_FILE
          + " bytes, magic 'ATLT', a valid checksum); restore it from a backup");
    }
    return b.getLong(4);
  }

  private void writeTerm(long term) throws IOException {
    ByteBuffer b = ByteBuffer.allocate(TERM_FILE).put(TERM_MAGIC).putLong(term);
    CRC32C crc = new CRC32C();
    crc.update(b.array(), 0, TERM_FILE - 4);
    b.putInt((int) crc.getValue());
    replace(b.array(), TERM_TEMP, TERM, "term " + term);
  }

  private void writeLeader(String holder, long term) throws IOException {
    replace((term + "\n" + holder).getBytes(StandardCharsets.UTF_8), LEADER_TEMP, LEADER, "leader");
  }

  private Optional<Leader> readLeader(long granted) throws IOException {
    try {
      String s = Files.readString(dir.resolve(LEADER), StandardCharsets.UTF_8);
      int nl = s.indexOf('\n');
      if (nl > 0 && Long.parseLong(s.substring(0, nl)) == granted) {
        return Optional.of(new Leader(s.substring(nl + 1), granted));
      }
      return Optional.empty();
    } catch (NoSuchFileException | NumberFormatException e) {
      return Optional.empty();
    }
  }

  /** Writes {@code bytes} to {@code temp}, forces it, renames it over {@code target}, forces the directory. */
  private void replace(byte[] bytes, String temp, String target, String what) throws IOException {
    Path tmp = dir.resolve(temp);
    try (FileChannel ch = FileChannel.open(tmp, StandardOpenOption.CREATE, StandardOpenOption.WRITE,
        StandardOpenOption.TRUNCATE_EXISTING)) {
      ByteBuffer buf = ByteBuffer.wrap(bytes);
      while (buf.hasRemaining()) {
        ch.write(buf);
      }
      ch.force(true);
    }
    try {
      Files.move(tmp, dir.resolve(target), StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
    } catch (AtomicMoveNotSupportedException e) {
      throw new StoreException("file store " + dir + ": the file system cannot replace files atomically", e);
    }
    try {
      directorySync.sync(dir); // makes the rename itself durable
    } catch (IOException e) {
      // The rename is visible but may not survive a crash: the outcome is ambiguous.
      throw new StoreException("file store " + dir + ": " + what + " is not durable: the directory"
          + " could not be synced after the rename: " + e.getMessage()
          + " (the file may hold the old or the new value; load() tells)", e);
    }
  }

  /** Runs {@code body} holding this directory's write lock, in this JVM and between processes. */
  private <T> T underWriteLock(IoBody<T> body) {
    writers.lock();
    try (FileChannel ch = FileChannel.open(dir.resolve(WRITE_LOCK), StandardOpenOption.CREATE,
        StandardOpenOption.WRITE)) {
      FileLock l = ch.lock();
      try {
        return body.run();
      } finally {
        l.release();
      }
    } catch (IOException e) {
      throw new StoreException("file store " + dir + ": " + e.getMessage(), e);
    } finally {
      writers.unlock();
    }
  }

  @Override
  public Optional<Stored> load() {
    checkOpen();
    return read(dir);
  }

  @Override
  public long save(byte[] data, long term, long expectedVersion) {
    checkOpen();
    if (data.length > MAX_BYTES) {
      throw new IllegalArgumentException("state: " + data.length + " bytes (expected: <= " + MAX_BYTES + ")");
    }
    return underWriteLock(() -> {
      long granted = grantedTerm();
      if (term < granted) {
        throw new StaleTermException("file store " + dir, term, granted);
      }
      if (term > granted) {
        throw new StoreException("file store " + dir + ": term " + term + " was never granted (expected: "
            + granted + ", the last one granted)");
      }
      long version = storedVersion();
      if (expectedVersion != version) {
        throw new StoreConflictException("file store " + dir, expectedVersion, version);
      }
      long next = version + 1;
      ByteBuffer buf = ByteBuffer.allocate(HEADER + data.length + 4);
      buf.put(MAGIC).put(FORMAT).putLong(next).putLong(term).putInt(data.length).put(data);
      CRC32C crc = new CRC32C();
      crc.update(buf.array(), 0, HEADER + data.length);
      buf.putInt((int) crc.getValue());
      replace(buf.array(), TEMP, STATE, "version " + next);
      return next;
    });
  }

  // ------------------------------------------------------------------------------------------
  // Leadership

  /** Locks {@code leader.lock} without waiting; null if another handle or process holds it. */
  private FileLock tryLockLeader(FileChannel ch) throws IOException {
    try {
      return ch.tryLock();
    } catch (OverlappingFileLockException e) {
      return null; // another handle in this JVM
    }
  }

  private FileChannel openLeaderChannel() throws IOException {
    return FileChannel.open(dir.resolve(LEADER_LOCK), StandardOpenOption.CREATE, StandardOpenOption.WRITE);
  }

  @Override
  public synchronized Optional<Lease> tryAcquire(String holder, Duration ttl) {
    checkOpen();
    AssignmentStore.checkLeaseArguments(holder, ttl);
    if (held != null) {
      return Optional.empty();
    }
    synchronized (leaderFile) {
      if (leaderFile.holder != null) {
        return Optional.empty();
      }
      leaderFile.evictWaiters();
      return acquire(holder, ttl);
    }
  }

  private Optional<Lease> acquire(String holder, Duration ttl) {
    try {
      FileChannel ch = openLeaderChannel();
      FileLock l = tryLockLeader(ch);
      if (l == null) {
        ch.close();
        return Optional.empty();
      }
      long term;
      try {
        term = underWriteLock(() -> {
          long next = grantedTerm() + 1;
          writeTerm(next);
          writeLeader(holder, next);
          return next;
        });
      } catch (RuntimeException e) {
        ch.close(); // releases the lock
        throw e;
      }
      hold(ch, l, new Lease(holder, term, ttl));
      return Optional.of(held);
    } catch (IOException e) {
      throw new StoreException("file store " + dir + ": cannot take the leadership: " + e.getMessage(), e);
    }
  }

  private void hold(FileChannel ch, FileLock l, Lease lease) {
    leaderFile.holder = this;
    leaderChannel = ch;
    leaderLock = l;
    held = lease;
    scheduleLapse(lease);
  }

  private void scheduleLapse(Lease lease) {
    if (lapse != null) {
      lapse.cancel(false);
    }
    lapse = timer.schedule(() -> lapse(lease), lease.ttl().toNanos(), TimeUnit.NANOSECONDS);
  }

  private synchronized void lapse(Lease lease) {
    if (lease.equals(held)) {
      dropLock();
    }
  }

  private void dropLock() {
    held = null;
    if (lapse != null) {
      lapse.cancel(false);
      lapse = null;
    }
    synchronized (leaderFile) {
      try {
        leaderChannel.close(); // releases the lock
      } catch (IOException e) {
        // the lock goes with the channel anyway
      }
      if (leaderFile.holder == this) {
        leaderFile.holder = null;
        leaderFile.notifyAll(); // leader watches of this JVM
      }
    }
    leaderChannel = null;
    leaderLock = null;
  }

  @Override
  public synchronized boolean renew(Lease lease) {
    checkOpen();
    if (held != null) {
      if (held.equals(lease) && leaderLock.isValid()) {
        scheduleLapse(lease);
        return true;
      }
      return false;
    }
    // Lapsed here (or held by a handle that is gone): take it again if no later term was granted.
    synchronized (leaderFile) {
      if (leaderFile.holder != null) {
        return false;
      }
      leaderFile.evictWaiters();
      return retake(lease);
    }
  }

  private boolean retake(Lease lease) {
    try {
      FileChannel ch = openLeaderChannel();
      FileLock l = tryLockLeader(ch);
      if (l == null) {
        ch.close();
        return false;
      }
      boolean current;
      try {
        current = underWriteLock(() -> {
          if (grantedTerm() != lease.term()) {
            return false;
          }
          writeLeader(lease.holder(), lease.term());
          return true;
        });
      } catch (RuntimeException e) {
        ch.close();
        throw e;
      }
      if (!current) {
        ch.close();
        return false;
      }
      hold(ch, l, lease);
      return true;
    } catch (IOException e) {
      throw new StoreException("file store " + dir + ": cannot renew the lease: " + e.getMessage(), e);
    }
  }

  @Override
  public synchronized void release(Lease lease) {
    if (lease.equals(held)) {
      dropLock();
    }
  }

  @Override
  public synchronized Optional<Leader> leader() {
    checkOpen();
    if (held != null) {
      return Optional.of(new Leader(held.holder(), held.term()));
    }
    synchronized (leaderFile) {
      if (leaderFile.holder != null) {
        return underWriteLock(() -> readLeader(grantedTerm())); // a handle of this JVM leads
      }
      leaderFile.evictWaiters();
      try (FileChannel ch = openLeaderChannel()) {
        FileLock probe = tryLockLeader(ch);
        if (probe != null) {
          probe.release();
          return Optional.empty(); // nobody holds it
        }
        return underWriteLock(() -> readLeader(grantedTerm()));
      } catch (IOException e) {
        throw new StoreException("file store " + dir + ": cannot read the leader: " + e.getMessage(), e);
      }
    }
  }

  // ------------------------------------------------------------------------------------------
  // Watch

  @Override
  public Watch watch(long afterVersion, Consumer<Stored> onChange) {
    checkOpen();
    VersionWatch w = new VersionWatch(afterVersion, onChange,
        v -> storedVersion() <= v ? Optional.empty() : read(dir), () -> closed,
        e -> log.log(System.Logger.Level.WARNING, "file store " + dir + ": watch: " + e));
    ScheduledFuture<?> f = watcher.scheduleWithFixedDelay(w::check, 0, pollInterval.toNanos(), TimeUnit.NANOSECONDS);
    return w.onClose(() -> f.cancel(false));
  }

  /**
   * A thread that blocks in {@code lock()} on {@code leader.lock} while another process leads (the
   * OS grants it the moment the leader's process releases the lock or dies), or waits on the
   * monitor of this JVM's holder, and wakes the watch then. It takes and drops the lock at once:
   * for that instant another process's {@code tryAcquire} fails (it stands by and tries again).
   * The reads of the watch every {@code poll} cover everything else.
   */
  @Override
  public Watch watchLeader(Duration poll, LeaderListener listener) {
    LeaderWatch.checkPoll(poll);
    checkOpen();
    java.util.concurrent.Semaphore leaderSeen = new java.util.concurrent.Semaphore(0);
    LeaderWatch w = new LeaderWatch(() -> {
      Optional<Leader> l = leader();
      if (l.isPresent() && leaderSeen.availablePermits() == 0) {
        leaderSeen.release(); // now wait for it to go
      }
      return l;
    }, listener, () -> closed, e -> log.log(System.Logger.Level.DEBUG, "file store " + dir + ": leader watch: " + e));
    java.util.concurrent.atomic.AtomicBoolean stop = new java.util.concurrent.atomic.AtomicBoolean();
    Thread waiter = Thread.ofPlatform().name("atoll-file-store-leader-lock").daemon().start(() -> {
      while (!stop.get() && !closed) {
        try {
          if (leaderSeen.tryAcquire(poll.toNanos(), TimeUnit.NANOSECONDS) && awaitLockFree(stop)) {
            w.wake();
          }
        } catch (InterruptedException e) {
          return;
        }
      }
    });
    w.pollEvery(poll, "atoll-file-store-leader-watch");
    leaderWatches.add(w);
    if (closed) { // closed meanwhile: close() may have missed it
      w.close();
    }
    return w.onClose(() -> {
      stop.set(true);
      synchronized (leaderFile) {
        leaderFile.evictWaiters();
        leaderFile.notifyAll();
      }
      waiter.interrupt();
      leaderWatches.remove(w);
    });
  }

  /**
   * Waits until no handle of this JVM holds {@code leader.lock} and the OS lets this process lock
   * it; true then, false if stopped or the wait was cut short (another handle of this JVM took or
   * probed the lock: the caller waits for the next sign of a leader).
   */
  private boolean awaitLockFree(java.util.concurrent.atomic.AtomicBoolean stop) throws InterruptedException {
    FileChannel ch;
    synchronized (leaderFile) {
      while (leaderFile.holder != null) {
        if (stop.get() || closed) {
          return false;
        }
        leaderFile.wait();
      }
      if (stop.get() || closed) {
        return false;
      }
      try {
        ch = FileChannel.open(dir.resolve(LEADER_LOCK), StandardOpenOption.CREATE, StandardOpenOption.WRITE);
      } catch (IOException e) {
        return false;
      }
      leaderFile.waiting.add(ch);
    }
    try {
      FileLock l = ch.lock(); // blocks while another process holds it
      if (l == null) {
        return false; // closed meanwhile
      }
      l.release();
      return true;
    } catch (IOException | OverlappingFileLockException e) {
      return false; // evicted: closed under the lock attempt
    } finally {
      synchronized (leaderFile) {
        if (leaderFile.waiting.remove(ch)) {
          try {
            ch.close();
          } catch (IOException e) {
            // closed anyway
          }
        }
      }
    }
  }

  private void checkOpen() {
    if (closed) {
      throw new StoreException("file store " + dir + ": closed");
    }
  }

  /** The directory this store lives in. */
  public Path directory() {
    return dir;
  }

  @Override
  public void close() {
    synchronized (this) {
      if (closed) {
        return;
      }
      closed = true;
      if (held != null) {
        dropLock();
      }
      timer.shutdownNow();
      watcher.shutdownNow();
    }
    // Its leader watches' waiters block in a lock of leader.lock or on the directory's monitor until
    // another manager goes: stop them now (outside this store's monitor: a watch's close waits for
    // a listener call under way, which may call this store).
    for (Watch w : java.util.List.copyOf(leaderWatches)) {
      w.close();
    }
  }

  @Override
  public String toString() {
    return "file store " + dir;
  }
}
