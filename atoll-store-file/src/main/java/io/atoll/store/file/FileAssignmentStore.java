package io.atoll.store.file;

import io.atoll.core.spi.AssignmentStore;
import io.atoll.core.spi.StoreConflictException;
import io.atoll.core.spi.StoreException;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.channels.FileLock;
import java.nio.channels.OverlappingFileLockException;
import java.nio.file.AtomicMoveNotSupportedException;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;
import java.util.Optional;
import java.util.zip.CRC32C;

/**
 * The embedded default {@link AssignmentStore}: one file in a data directory, replaced atomically.
 *
 * <p>A save writes {@code state.tmp}, forces it to disk, renames it over {@code state} (an atomic
 * replace on POSIX file systems) and forces the directory, so after a crash at any point the
 * directory holds either the old or the new state, never a mix. A save returns only once the
 * directory is forced: if it cannot be, the save fails (its outcome ambiguous) rather than report a
 * write that a crash could undo. The file carries its version and
 * a CRC32C; a damaged file is reported, never half-read.
 *
 * <pre>
 * magic "ATLS", format 1 (1 byte), version (8 bytes), length (4 bytes), data, CRC32C of all before (4 bytes)
 * </pre>
 *
 * <p>One process at a time: opening takes an exclusive lock on {@code lock} in the directory for
 * the life of the store, so a second manager on the same directory fails at start with a clear
 * error instead of overwriting the first one's state. Thread-safe.
 */
public final class FileAssignmentStore implements AssignmentStore {

  static final String STATE = "state";
  static final String TEMP = "state.tmp";
  static final String LOCK = "lock";
  private static final byte[] MAGIC = {'A', 'T', 'L', 'S'};
  private static final byte FORMAT = 1;
  private static final int HEADER = 4 + 1 + 8 + 4;

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

  private final Path dir;
  private final FileChannel lockChannel;
  private final FileLock lock;
  private final DirectorySync directorySync;
  private long version; // guarded by this
  private boolean closed; // guarded by this

  private FileAssignmentStore(Path dir, FileChannel lockChannel, FileLock lock, DirectorySync directorySync,
      long version) {
    this.dir = dir;
    this.lockChannel = lockChannel;
    this.lock = lock;
    this.directorySync = directorySync;
    this.version = version;
  }

  /**
   * Opens the store in {@code dir}, creating the directory if needed, and locks it.
   *
   * @throws StoreException if the directory cannot be created or locked (another process holds
   *     it), or if it holds a damaged state file
   */
  public static FileAssignmentStore open(Path dir) {
    return open(dir, DirectorySync.FSYNC);
  }

  /** {@link #open(Path)} with the directory sync given, for tests that make it fail. */
  static FileAssignmentStore open(Path dir, DirectorySync directorySync) {
    Path abs = dir.toAbsolutePath();
    FileChannel ch = null;
    try {
      Files.createDirectories(abs);
      ch = FileChannel.open(abs.resolve(LOCK), StandardOpenOption.CREATE, StandardOpenOption.WRITE);
      FileLock l;
      try {
        l = ch.tryLock();
      } catch (OverlappingFileLockException e) {
        l = null;
      }
      if (l == null) {
        throw new StoreException("file store " + abs + ": in use by another process (it holds "
            + abs.resolve(LOCK) + "); stop it or choose another data directory");
      }
      Files.deleteIfExists(abs.resolve(TEMP)); // a save that crashed before its rename
      long v = read(abs).map(Stored::version).orElse(0L);
      return new FileAssignmentStore(abs, ch, l, directorySync, v);
    } catch (IOException e) {
      closeQuietly(ch);
      throw new StoreException("file store " + abs + ": cannot open: " + e.getMessage(), e);
    } catch (RuntimeException e) {
      closeQuietly(ch);
      throw e;
    }
  }

  /**
   * Reads the state in {@code dir} without locking it, for tools and tests that inspect a store
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
    if (all.length < HEADER + 4) {
      throw damaged(file, "length " + all.length + " (expected: >= " + (HEADER + 4) + ")");
    }
    ByteBuffer b = ByteBuffer.wrap(all);
    for (byte m : MAGIC) {
      if (b.get() != m) {
        throw damaged(file, "bad magic (expected: 'ATLS')");
      }
    }
    byte format = b.get();
    if (format != FORMAT) {
      throw damaged(file, "format " + format + " (expected: " + FORMAT + ")");
    }
    long version = b.getLong();
    int length = b.getInt();
    if (length < 0 || length != all.length - HEADER - 4) {
      throw damaged(file, "data length " + length + " (expected: " + (all.length - HEADER - 4) + ")");
    }
    CRC32C crc = new CRC32C();
    crc.update(all, 0, HEADER + length);
    int stored = ByteBuffer.wrap(all, HEADER + length, 4).getInt();
    if ((int) crc.getValue() != stored) {
      throw damaged(file, "checksum mismatch");
    }
    if (version < 1) {
      throw damaged(file, "version " + version + " (expected: >= 1)");
    }
    byte[] data = new byte[length];
    System.arraycopy(all, HEADER, data, 0, length);
    return new Stored(version, data);
  }

  private static StoreException damaged(Path file, String what) {
    return new StoreException("file store " + file + ": damaged state file: " + what
        + "; restore it from a backup or remove it to start empty");
  }

  @Override
  public synchronized Optional<Stored> load() {
    checkOpen();
    Optional<Stored> s = read(dir);
    // After a save whose outcome was ambiguous (an error after the rename), the file is the truth.
    version = s.map(Stored::version).orElse(0L);
    return s;
  }

  @Override
  public synchronized long save(byte[] data, long expectedVersion) {
    checkOpen();
    if (data.length > MAX_BYTES) {
      throw new IllegalArgumentException("state: " + data.length + " bytes (expected: <= " + MAX_BYTES + ")");
    }
    if (expectedVersion != version) {
      throw new StoreConflictException("file store " + dir, expectedVersion, version);
    }
    long next = version + 1;
    ByteBuffer buf = ByteBuffer.allocate(HEADER + data.length + 4);
    buf.put(MAGIC).put(FORMAT).putLong(next).putInt(data.length).put(data);
    CRC32C crc = new CRC32C();
    crc.update(buf.array(), 0, HEADER + data.length);
    buf.putInt((int) crc.getValue());
    buf.flip();
    Path tmp = dir.resolve(TEMP);
    try {
      try (FileChannel ch = FileChannel.open(tmp, StandardOpenOption.CREATE, StandardOpenOption.WRITE,
          StandardOpenOption.TRUNCATE_EXISTING)) {
        while (buf.hasRemaining()) {
          ch.write(buf);
        }
        ch.force(true);
      }
      try {
        Files.move(tmp, dir.resolve(STATE), StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
      } catch (AtomicMoveNotSupportedException e) {
        throw new StoreException("file store " + dir + ": the file system cannot replace files atomically", e);
      }
      try {
        directorySync.sync(dir); // makes the rename itself durable
      } catch (IOException e) {
        // The rename is visible but may not survive a crash: the outcome is ambiguous (the file
        // may hold either state), and load() takes the file as the truth again.
        throw new StoreException("file store " + dir + ": version " + next + " is not durable: the directory"
            + " could not be synced after the rename: " + e.getMessage()
            + " (the state file may hold the old or the new state; load() tells)", e);
      }
    } catch (IOException e) {
      throw new StoreException("file store " + dir + ": cannot write version " + next + ": " + e.getMessage(), e);
    }
    version = next;
    return next;
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
  public synchronized void close() {
    if (closed) {
      return;
    }
    closed = true;
    try {
      lock.release();
    } catch (IOException e) {
      // The lock goes with the channel anyway.
    }
    closeQuietly(lockChannel);
  }

  private static void closeQuietly(FileChannel ch) {
    if (ch != null) {
      try {
        ch.close();
      } catch (IOException e) {
        // nothing left to release
      }
    }
  }

  @Override
  public String toString() {
    return "file store " + dir;
  }
}
