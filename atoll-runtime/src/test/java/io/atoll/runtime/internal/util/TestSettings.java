package io.atoll.runtime.internal.util;

import io.atoll.core.PodAddress;
import io.atoll.core.PodVersion;
import io.atoll.core.ShardHasher;
import io.atoll.core.Ticker;
import io.atoll.runtime.PodSettings;
import io.atoll.runtime.ShardingObserver;
import java.time.Duration;

/** Pod settings for unit tests: a manager at a port nothing listens on, default limits. */
public final class TestSettings {

  private TestSettings() {}

  /** Settings with the given clock. */
  public static PodSettings with(Ticker ticker) {
    return new PodSettings(new PodAddress("127.0.0.1", 1), "127.0.0.1", 0, PodVersion.of("1"),
        Duration.ofSeconds(5), Duration.ofSeconds(5), 100, 1000, 1 << 20, Duration.ofSeconds(1),
        Duration.ofSeconds(1), Duration.ofSeconds(1), false, true, ShardHasher.DEFAULT, ticker,
        ShardingObserver.NONE, 10_000, null, io.atoll.transport.grpc.security.WireSecurity.PLAINTEXT);
  }

  /** A context of those settings whose scheduler runs nothing. */
  public static PodContext context(Ticker ticker) {
    return new PodContext(with(ticker), ticker, (task, delayNanos) -> { });
  }
}
