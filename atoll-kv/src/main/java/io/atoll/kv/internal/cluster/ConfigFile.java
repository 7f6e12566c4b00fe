package io.atoll.kv.internal.cluster;

import io.atoll.core.ClusterConfig;
import io.atoll.core.PodAddress;
import io.atoll.core.PodId;
import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.HashMap;
import java.util.HashSet;
import java.util.Map;
import java.util.Optional;

/**
 * The node's config file in its data directory ({@code nodes.conf}, binary, as Redis keeps its
 * own): the node's identity, the config (atoll-core's encoding) and the migration marks. Written
 * whole to a temporary file and moved into place, so a crash leaves the old or the new file.
 */
public final class ConfigFile {
  private static final int MAGIC = 0x41_4B_56_31; // "AKV1"
  private static final int MAX_BYTES = 64 << 20;

  /** A Redis-cluster-mode node's file. */
  public static final String NODES = "nodes.conf";
  /**
   * A managed node's file (kept only with the append-only file): its identity and migration marks
   * across a restart; the config in it is the manager's last one, replaced by the manager's own.
   */
  public static final String MANAGED = "managed-nodes.conf";

  private final Path file;
  /** Whether a save reaches the disk before it returns (file and directory synced). */
  private final boolean sync;

  /** The Redis-cluster-mode config file in {@code dataDir}, saved without a sync. */
  public ConfigFile(Path dataDir) {
    this(dataDir, NODES, false);
  }

  /** The config file {@code name} in {@code dataDir}; with {@code sync}, on disk when a save returns. */
  public ConfigFile(Path dataDir, String name, boolean sync) {
    this.file = dataDir.resolve(name);
    this.sync = sync;
  }

  /** Where the file lives. */
  public Path path() {
    return file;
  }

  /** The saved view, if any. @throws IllegalStateException naming the file if it is malformed */
  public Optional<ClusterView> load() {
    if (!Files.exists(file)) {
      return Optional.empty();
    }
    try {
      if (Files.size(file) > MAX_BYTES) {
        throw new IllegalStateException(file + ": " + Files.size(file) + " bytes (expected: <= " + MAX_BYTES + ")");
      }
      DataInputStream in = new DataInputStream(new ByteArrayInputStream(Files.readAllBytes(file)));
      if (in.readInt() != MAGIC) {
        throw new IllegalStateException(file + ": not an Atoll KV node config (bad magic)");
      }
      PodId me = readId(in);
      byte[] config = new byte[in.readInt()];
      in.readFully(config);
      Map<Integer, PodId> migrating = readMarks(in);
      Map<Integer, PodId> importing = readMarks(in);
      return Optional.of(new ClusterView(ClusterConfig.decode(config), me, migrating, importing, new HashSet<>()));
    } catch (IOException | RuntimeException e) {
      throw new IllegalStateException(file + ": cannot read the node config (" + e.getMessage()
          + "); move it away to start as a new node", e);
    }
  }

  /** Saves {@code v}, replacing the file atomically. */
  public void save(ClusterView v) {
    try {
      ByteArrayOutputStream bytes = new ByteArrayOutputStream();
      DataOutputStream out = new DataOutputStream(bytes);
      out.writeInt(MAGIC);
      writeId(out, v.me());
      byte[] config = v.config().encode();
      out.writeInt(config.length);
      out.write(config);
      writeMarks(out, v.migrating());
      writeMarks(out, v.importing());
      out.flush();
      Files.createDirectories(file.getParent());
      Path tmp = file.resolveSibling(file.getFileName() + ".tmp");
      Files.write(tmp, bytes.toByteArray());
      if (sync) {
        try (java.nio.channels.FileChannel c = java.nio.channels.FileChannel.open(tmp,
            java.nio.file.StandardOpenOption.WRITE)) {
          c.force(true);
        }
      }
      Files.move(tmp, file, StandardCopyOption.REPLACE_EXISTING, StandardCopyOption.ATOMIC_MOVE);
      if (sync) {
        try (java.nio.channels.FileChannel d = java.nio.channels.FileChannel.open(file.getParent(),
            java.nio.file.StandardOpenOption.READ)) {
          d.force(true); // the rename itself
        }
      }
    } catch (IOException e) {
      throw new UncheckedIOException("cannot write " + file, e);
    }
  }

  private static void writeMarks(DataOutputStream out, Map<Integer, PodId> marks) throws IOException {
    out.writeInt(marks.size());
    for (Map.Entry<Integer, PodId> e : marks.entrySet()) {
      out.writeShort(e.getKey());
      writeId(out, e.getValue());
    }
  }

  private static Map<Integer, PodId> readMarks(DataInputStream in) throws IOException {
    int n = in.readInt();
    if (n < 0 || n > 16384) {
      throw new IOException("marks: " + n + " (expected: 0..16384)");
    }
    Map<Integer, PodId> m = new HashMap<>();
    for (int i = 0; i < n; i++) {
      m.put(in.readUnsignedShort() & 16383, readId(in));
    }
    return m;
  }

  private static void writeId(DataOutputStream out, PodId id) throws IOException {
    out.writeUTF(id.address().host());
    out.writeInt(id.address().port());
    out.writeLong(id.incarnation());
  }

  private static PodId readId(DataInputStream in) throws IOException {
    return new PodId(new PodAddress(in.readUTF(), in.readInt()), in.readLong());
  }
}
