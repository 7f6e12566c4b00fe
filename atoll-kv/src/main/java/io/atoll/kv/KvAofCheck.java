package io.atoll.kv;

import io.atoll.kv.internal.persist.Recovery;
import java.io.IOException;
import java.nio.file.Path;
import java.util.List;

/** Checks a node's append-only file, and cuts it at its last valid record if asked: {@code atoll kv-check-aof}. */
public final class KvAofCheck {
  private KvAofCheck() {
  }

  /**
   * What a check found in one file.
   *
   * @param file the file
   * @param size its length in bytes
   * @param okUpTo the offset up to which it holds valid records
   * @param records how many valid records it holds
   * @param problem what is wrong at {@code okUpTo}, or null if the file is valid
   * @param cutTail whether the problem is a record the file ends inside (what a crash leaves)
   */
  public record FileReport(Path file, long size, long okUpTo, long records, String problem, boolean cutTail) {
    /** The summary line, as Redis' redis-check-aof prints it. */
    public String line() {
      return "AOF analyzed: filename=" + file.getFileName() + ", size=" + size + ", ok_up_to=" + okUpTo
          + ", records=" + records + ", diff=" + (size - okUpTo);
    }
  }

  /**
   * Checks {@code path} (a manifest, the appendonlydir holding it, or one log file), every file in
   * load order up to the first one that is not valid; with {@code fix}, cuts the last file of the
   * manifest at its last valid record.
   *
   * @throws IllegalStateException if the manifest is malformed, or {@code fix} would cut a file that
   *     is not the last
   */
  public static List<FileReport> check(Path path, boolean fix) throws IOException {
    return Recovery.check(path, fix);
  }
}
