package io.atoll.kv.internal.persist;

import java.io.IOException;
import java.nio.channels.FileChannel;
import java.nio.channels.FileLock;
import java.nio.channels.OverlappingFileLockException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;

/**
 * An exclusive lock on a node's data directory ({@code <dir>/atoll.lock}), held while the node
 * runs: two processes replaying and appending the same log, or a managed node registering again
 * as an incarnation another process still is, would each lose what the other acknowledged. The
 * operating system releases it when the process dies, so a killed node restarts at once.
 */
public final class DataDirLock implements AutoCloseable {
  /** The lock file's name in the data directory. */
  public static final String FILE = "atoll.lock";

  private final FileChannel channel;
  private final FileLock lock;

  private DataDirLock(FileChannel channel, FileLock lock) {
    this.channel = channel;
    this.lock = lock;
  }

  /**
   * Takes the lock of {@code dataDir} (created if missing).
   *
   * @throws IllegalStateException naming the directory if another process (or node) holds it, or
   *     it cannot be created
   */
  public static DataDirLock acquire(Path dataDir) {
    Path file = dataDir.resolve(FILE);
    FileChannel channel = null;
    try {
      Files.createDirectories(dataDir);
      channel = FileChannel.open(file, StandardOpenOption.CREATE, StandardOpenOption.WRITE);
      FileLock lock = channel.tryLock();
      if (lock == null) {
        throw new OverlappingFileLockException();
      }
      return new DataDirLock(channel, lock);
    } catch (OverlappingFileLockException e) {
      close(channel);
      throw new IllegalStateException("the data directory " + dataDir + " is in use by another Atoll KV node (it"
          + " holds " + file + "; expected: one node per data directory)");
    } catch (IOException e) {
      close(channel);
      throw new IllegalStateException("cannot lock the data directory " + dataDir + " (" + e.getMessage() + ")", e);
    }
  }

  private static void close(FileChannel channel) {
    if (channel != null) {
      try {
        channel.close();
      } catch (IOException ignored) {
        // nothing was locked
      }
    }
  }

  /** Releases the lock. */
  @Override
  public void close() {
    try {
      lock.release();
    } catch (IOException ignored) {
      // the channel's close releases it as well
    }
    close(channel);
  }
}
