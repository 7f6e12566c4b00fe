package io.atoll.kv.internal.persist;

import java.io.BufferedInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.List;
import io.atoll.kv.KvAofCheck.FileReport;

/**
 * Checks a log and, asked, cuts it where it stops being valid: what {@code atoll kv-check-aof}
 * does (Redis' {@code redis-check-aof}).
 */
public final class Recovery {
  // The public entry is io.atoll.kv.KvAofCheck.
  private Recovery() {
  }

  /**
   * Checks every file of the manifest at {@code path} (a manifest, a log directory, or one log
   * file), in order; with {@code fix}, cuts the last file at its last valid record.
   */
  public static List<FileReport> check(Path path, boolean fix) throws IOException {
    List<Path> files = new ArrayList<>();
    if (Files.isDirectory(path)) {
      path = path.resolve(Manifest.NAME);
    }
    if (path.getFileName().toString().endsWith(".manifest")) {
      for (Manifest.Entry e : Manifest.read(path).loadOrder()) {
        files.add(path.resolveSibling(e.name()));
      }
    } else {
      files.add(path);
    }
    List<FileReport> reports = new ArrayList<>();
    for (int i = 0; i < files.size(); i++) {
      Path f = files.get(i);
      FileReport r = checkFile(f);
      reports.add(r);
      if (r.problem() != null && fix) {
        if (i != files.size() - 1) {
          throw new IllegalStateException(f + " is not the last file of the manifest: only the last can be cut");
        }
        try (FileChannel ch = FileChannel.open(f, StandardOpenOption.WRITE)) {
          ch.truncate(r.okUpTo());
          ch.force(true);
        }
      }
      if (r.problem() != null) {
        break; // what follows a broken file cannot be trusted to follow it
      }
    }
    return reports;
  }

  static FileReport checkFile(Path f) throws IOException {
    long size = Files.size(f);
    long records = 0;
    try (InputStream in = new BufferedInputStream(Files.newInputStream(f), 1 << 16)) {
      LogReader r = new LogReader(in, 0, size);
      while (true) {
        LogReader.Next n = r.next();
        if (n instanceof LogReader.Record) {
          records++;
        } else if (n instanceof LogReader.End e) {
          return new FileReport(f, size, e.offset(), records, null, false);
        } else {
          long cut = crashTail(f, n);
          if (n instanceof LogReader.Truncated t) {
            return new FileReport(f, size, t.validUpTo(), records, cut < 0
                ? "a record at offset " + t.validUpTo() + " claims more bytes than follow it, yet valid records follow"
                : "the file ends inside the record at offset " + t.validUpTo() + " (a crash while writing it)", cut >= 0);
          }
          LogReader.Corrupt c = (LogReader.Corrupt) n;
          return new FileReport(f, size, c.recordStart(), records, cut >= 0 ? "the file ends in " + (size - cut)
              + " zero bytes from offset " + cut + " (a crash of the machine)" : c.what() + " at offset " + c.offset(),
              cut >= 0);
        }
      }
    }
  }

  /**
   * Where to cut {@code file} if the way it stopped reading ({@code end}: cut short, or malformed)
   * is the tail a crash leaves, -1 if it is not: a record the file ends inside with no valid
   * checksum line after it, or nothing but zeros from a record's start on. The one rule for both
   * the start of a node and {@code atoll kv-check-aof}.
   */
  static long crashTail(Path file, LogReader.Next end) throws IOException {
    if (end instanceof LogReader.Truncated t) {
      return moreRecordsAfter(file, t.validUpTo()) ? -1 : t.validUpTo();
    }
    if (end instanceof LogReader.Corrupt c) {
      return zerosFrom(file, c.recordStart()) ? c.recordStart() : -1;
    }
    return -1;
  }

  /**
   * Whether every byte of {@code file} from {@code offset} on is zero: the tail a crash of the
   * machine may leave (blocks allocated, their data never written), which is cut like a torn record.
   */
  static boolean zerosFrom(Path file, long offset) throws IOException {
    try (InputStream in = new BufferedInputStream(Files.newInputStream(file), 1 << 16)) {
      in.skipNBytes(offset);
      int b;
      boolean any = false;
      while ((b = in.read()) != -1) {
        if (b != 0) {
          return false;
        }
        any = true;
      }
      return any;
    }
  }

  /**
   * Whether a checksum line ({@code \r\n#c:} and 8 hex digits and {@code \r\n}) appears in {@code
   * file} after {@code offset}: then a record there that seems cut short is a damaged length with
   * valid records behind it, not the tail a crash left. (A value could hold those bytes by chance:
   * the node then refuses to start rather than drop what follows.)
   */
  static boolean moreRecordsAfter(Path file, long offset) throws IOException {
    try (InputStream in = new BufferedInputStream(Files.newInputStream(file), 1 << 16)) {
      in.skipNBytes(offset);
      byte[] window = new byte[LogBuffer.CHECKSUM_LINE + 2];
      int filled = 0;
      int b;
      while ((b = in.read()) != -1) {
        if (filled < window.length) {
          window[filled++] = (byte) b;
        } else {
          System.arraycopy(window, 1, window, 0, window.length - 1);
          window[window.length - 1] = (byte) b;
        }
        if (filled == window.length && window[0] == '\r' && window[1] == '\n' && window[2] == '#'
            && window[3] == 'c' && window[4] == ':' && window[13] == '\r' && window[14] == '\n'
            && LogBuffer.hex8(window, 5) >= 0) {
          return true;
        }
      }
      return false;
    }
  }
}
