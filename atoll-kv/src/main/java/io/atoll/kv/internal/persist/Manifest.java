package io.atoll.kv.internal.persist;

import java.io.IOException;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.List;

/**
 * The list of log files, Redis 7's {@code appendonly.aof.manifest}: one line per file, {@code file
 * <name> seq <n> type <b|h|i>} (base, history, increment), the base first. Written whole to a
 * temporary file, synced, renamed over the old one and the directory synced, so a crash leaves
 * either the old list or the new one.
 *
 * @param files the files in load order
 */
record Manifest(List<Entry> files) {

  static final String NAME = "appendonly.aof.manifest";
  static final String PREFIX = "appendonly.aof.";

  /** One file: its name in the directory, its sequence number and its type. */
  record Entry(String name, long seq, char type) {
  }

  Manifest {
    files = List.copyOf(files);
  }

  /** The file appended to now: the last increment. */
  Entry current() {
    for (int i = files.size() - 1; i >= 0; i--) {
      if (files.get(i).type() == 'i') {
        return files.get(i);
      }
    }
    throw new IllegalStateException("the manifest lists no increment file");
  }

  /** The files a load replays, in order: the base, then the increments (history files are not). */
  List<Entry> loadOrder() {
    List<Entry> out = new ArrayList<>();
    files.stream().filter(e -> e.type() == 'b').forEach(out::add);
    files.stream().filter(e -> e.type() == 'i').forEach(out::add);
    return out;
  }

  /** This with {@code e} appended. */
  Manifest with(Entry e) {
    List<Entry> out = new ArrayList<>(files);
    out.add(e);
    return new Manifest(out);
  }

  /** The next sequence number for a file of {@code type}. */
  long nextSeq(char type) {
    return files.stream().filter(e -> e.type() == type).mapToLong(Entry::seq).max().orElse(0) + 1;
  }

  /** A manifest of one increment file, the first. */
  static Manifest fresh() {
    return new Manifest(List.of(new Entry(PREFIX + "1.incr.aof", 1, 'i')));
  }

  /**
   * Reads {@code file}.
   *
   * @throws IllegalStateException naming the file and line of anything malformed
   */
  static Manifest read(Path file) throws IOException {
    List<String> lines = Files.readAllLines(file, StandardCharsets.UTF_8);
    List<Entry> files = new ArrayList<>();
    long lastIncr = 0;
    boolean base = false;
    for (int n = 0; n < lines.size(); n++) {
      String line = lines.get(n).strip();
      if (line.isEmpty() || line.startsWith("#")) {
        continue;
      }
      String[] f = line.split("\\s+");
      String name = null;
      long seq = -1;
      char type = 0;
      if (f.length < 6 || f.length % 2 != 0) {
        throw bad(file, n, line, "expected 'file <name> seq <n> type <b|h|i>'");
      }
      for (int i = 0; i < f.length; i += 2) {
        switch (f[i].toLowerCase(java.util.Locale.ROOT)) {
          case "file" -> name = f[i + 1];
          case "seq" -> {
            try {
              seq = Long.parseLong(f[i + 1]);
            } catch (NumberFormatException e) {
              throw bad(file, n, line, "seq is not a number");
            }
          }
          case "type" -> type = f[i + 1].length() == 1 ? f[i + 1].charAt(0) : '?';
          default -> { } // a later version's key: ignored, as Redis does
        }
      }
      if (name == null || seq < 1 || type == 0) {
        throw bad(file, n, line, "file, seq (from 1) and type are all required");
      }
      if (name.contains("/") || name.contains("\\") || name.equals("..")) {
        throw bad(file, n, line, "a file name, not a path");
      }
      switch (type) {
        case 'b' -> {
          if (base) {
            throw bad(file, n, line, "a second base file");
          }
          base = true;
        }
        case 'i' -> {
          if (seq <= lastIncr) {
            throw bad(file, n, line, "increment sequence numbers must grow");
          }
          lastIncr = seq;
        }
        case 'h' -> { }
        default -> throw bad(file, n, line, "type must be b, h or i");
      }
      files.add(new Entry(name, seq, type));
    }
    if (files.isEmpty()) {
      throw new IllegalStateException(file + ": an empty manifest (expected: at least one 'file ... type i' line)");
    }
    return new Manifest(files);
  }

  private static IllegalStateException bad(Path file, int n, String line, String what) {
    return new IllegalStateException(file + ", line " + (n + 1) + ": '" + line + "': " + what);
  }

  /** The manifest's text: bases first, then history, then increments. */
  String text() {
    StringBuilder sb = new StringBuilder();
    for (char t : new char[] {'b', 'h', 'i'}) {
      for (Entry e : files) {
        if (e.type() == t) {
          sb.append("file ").append(e.name()).append(" seq ").append(e.seq()).append(" type ").append(t).append('\n');
        }
      }
    }
    return sb.toString();
  }

  /** Writes this over {@code dir}'s manifest atomically and durably. */
  void write(Path dir) throws IOException {
    Path tmp = dir.resolve("temp-" + NAME);
    try (FileChannel ch = FileChannel.open(tmp, StandardOpenOption.CREATE, StandardOpenOption.WRITE,
        StandardOpenOption.TRUNCATE_EXISTING)) {
      var buf = java.nio.ByteBuffer.wrap(text().getBytes(StandardCharsets.UTF_8));
      while (buf.hasRemaining()) {
        ch.write(buf);
      }
      ch.force(true);
    }
    Files.move(tmp, dir.resolve(NAME), StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
    syncDirectory(dir);
  }

  /** Syncs a directory, so a file created or renamed in it survives a crash of the machine. */
  static void syncDirectory(Path dir) throws IOException {
    try (FileChannel d = FileChannel.open(dir, StandardOpenOption.READ)) {
      d.force(true);
    }
  }
}
