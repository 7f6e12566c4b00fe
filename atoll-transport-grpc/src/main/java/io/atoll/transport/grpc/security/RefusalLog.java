package io.atoll.transport.grpc.security;

import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.Consumer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Logs each refused peer once: a peer that keeps retrying must not flood the log, and a flood of
 * distinct peers is bounded too (after {@link #MAX_REMEMBERED} keys, one notice and then silence).
 * Thread-safe.
 */
final class RefusalLog {

  static final int MAX_REMEMBERED = 1024;
  private static final Logger log = LoggerFactory.getLogger("io.atoll.security");

  private final Set<String> seen = ConcurrentHashMap.newKeySet();
  private final AtomicBoolean full = new AtomicBoolean();
  private final Consumer<String> sink;

  /** Also hands every logged line to {@code sink} (for tests; a no-op otherwise). */
  RefusalLog(Consumer<String> sink) {
    this.sink = sink;
  }

  /** Logs {@code line} as a warning unless a line with the same {@code key} was logged before. */
  void refuse(String key, String line) {
    if (seen.size() >= MAX_REMEMBERED) {
      if (full.compareAndSet(false, true)) {
        log.warn("more than {} distinct refused peers: further refusals are not logged", MAX_REMEMBERED);
      }
      return;
    }
    if (seen.add(key)) {
      log.warn("{} (logged once per peer)", line);
      sink.accept(line);
    }
  }
}
