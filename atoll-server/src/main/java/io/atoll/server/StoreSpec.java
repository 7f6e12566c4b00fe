package io.atoll.server;

import io.atoll.core.spi.AssignmentStore;
import io.atoll.store.etcd.EtcdAssignmentStore;
import io.atoll.store.etcd.EtcdStoreOptions;
import io.atoll.store.file.FileAssignmentStore;
import io.atoll.store.redis.RedisAssignmentStore;
import io.atoll.store.redis.RedisStoreOptions;
import java.nio.file.Path;

/**
 * The manager's {@code --store}: {@code file} (the data directory), {@code file:<dir>},
 * {@code etcd://…}, {@code etcds://…}, {@code redis://…} or {@code rediss://…}. Parsed and checked
 * before anything connects, so a malformed value stops the start with the expected form.
 *
 * @param kind file, etcd or redis
 * @param spec the value as given
 * @param dir the directory of a file store, else null
 */
record StoreSpec(String kind, String spec, Path dir) {

  static final String FORM = "file, file:<dir>, etcd://host:port[,host:port][/prefix],"
      + " redis://[user:password@]host:port[/db] (etcds:// and rediss:// for TLS)";

  /**
   * Parses {@code spec}; {@code dataDir} is the file store's directory for plain {@code file}.
   *
   * @throws IllegalArgumentException naming what is wrong and the expected forms
   */
  static StoreSpec parse(String spec, Path dataDir) {
    String s = spec == null ? "" : spec.strip();
    if (s.equals("file")) {
      return new StoreSpec("file", s, dataDir);
    }
    if (s.startsWith("file:")) {
      String dir = s.substring("file:".length());
      if (dir.isEmpty()) {
        throw new IllegalArgumentException("--store: 'file:' names no directory (expected: " + FORM + ")");
      }
      return new StoreSpec("file", s, Path.of(dir));
    }
    if (s.startsWith("etcd://") || s.startsWith("etcds://")) {
      EtcdStoreOptions.parse(s);
      return new StoreSpec("etcd", s, null);
    }
    if (s.startsWith("redis://") || s.startsWith("rediss://")) {
      RedisStoreOptions.parse(s);
      return new StoreSpec("redis", s, null);
    }
    throw new IllegalArgumentException("--store: '" + s + "' (expected: " + FORM + ")");
  }

  /** Opens the store; for etcd and Redis this connects. */
  AssignmentStore open() {
    return switch (kind) {
      case "file" -> FileAssignmentStore.open(dir);
      case "etcd" -> EtcdAssignmentStore.open(spec);
      case "redis" -> RedisAssignmentStore.open(spec);
      default -> throw new IllegalStateException("store kind " + kind);
    };
  }

  /** Where the state lives, without passwords. */
  String describe() {
    return switch (kind) {
      case "file" -> "data dir " + dir.toAbsolutePath();
      case "etcd" -> EtcdStoreOptions.parse(spec).describe();
      default -> RedisStoreOptions.parse(spec).describe();
    };
  }
}
