package io.atoll.runtime;

import io.atoll.core.PodAddress;
import io.atoll.core.PodVersion;
import io.atoll.core.ShardHasher;
import io.atoll.core.Ticker;
import io.atoll.transport.grpc.security.WireSecurity;
import java.time.Duration;

/**
 * Everything a pod runs with, validated by {@link Sharding.Builder}. Immutable. Not API: public only
 * because the builder hands it to the pod behind this package through {@link PodProvider}; it may
 * change in any release.
 *
 * @param manager where the shard manager listens
 * @param host the address this pod listens on and announces
 * @param port the port, 0 for any free one
 * @param version the code version, for version-aware allocation
 * @param askTimeout default timeout of an ask
 * @param sendTimeout default timeout of a tell
 * @param bufferSize most messages waiting per shard while its owner is unknown or moving
 * @param maxInFlight most messages of this pod in flight at once
 * @param maxMessageBytes largest encoded message
 * @param terminationTimeout how long a graceful stop waits for entities to stop
 * @param gossipInterval how often the pod exchanges its config with a random peer
 * @param startTimeout how long start waits for the manager
 * @param clientOnly whether the pod only sends (hosts no shards, does not register)
 * @param keepServingWhileManagerDown whether the pod rides out a manager that is down (see the cluster package's ManagerLink)
 * @param hasher entity id to shard
 * @param ticker the clock
 * @param observer hears shard and entity events
 * @param maxQueued most messages waiting in this pod's mailboxes; more are refused as overloaded
 * @param maxQueueTime longest a message is expected to wait for its entity; one expected to wait
 *     longer is refused as overloaded ({@link Duration#ZERO}: no bound but the sender's deadline)
 * @param advertise the address announced to the manager and peers, or null for {@code host} and the
 *     bound port
 * @param managers every shard manager address, {@code manager} first; the pod follows the leader
 * @param security plaintext, or mutual TLS with this pod's certificate
 * @param roles the roles whose shard spaces this pod hosts, announced when it registers
 */
public record PodSettings(
    PodAddress manager,
    String host,
    int port,
    PodVersion version,
    Duration askTimeout,
    Duration sendTimeout,
    int bufferSize,
    int maxInFlight,
    int maxMessageBytes,
    Duration terminationTimeout,
    Duration gossipInterval,
    Duration startTimeout,
    boolean clientOnly,
    boolean keepServingWhileManagerDown,
    ShardHasher hasher,
    Ticker ticker,
    ShardingObserver observer,
    int maxQueued,
    Duration maxQueueTime,
    PodAddress advertise,
    java.util.List<PodAddress> managers,
    WireSecurity security,
    java.util.List<String> roles) {

  /** The default {@link #maxQueueTime()}. */
  public static final Duration DEFAULT_MAX_QUEUE_TIME = Duration.ofSeconds(1);

  /** Validates the manager addresses and the roles. */
  public PodSettings {
    java.util.Objects.requireNonNull(maxQueueTime, "maxQueueTime");
    if (maxQueueTime.isNegative()) {
      throw new IllegalArgumentException("max queue time: " + maxQueueTime + " (expected: >= 0)");
    }
    roles = new io.atoll.core.Pod(new io.atoll.core.PodId(manager, 0), version, roles).roles(); // validated, sorted
    java.util.Objects.requireNonNull(manager, "manager");
    managers = managers == null || managers.isEmpty() ? java.util.List.of(manager) : java.util.List.copyOf(managers);
    if (!managers.get(0).equals(manager)) {
      throw new IllegalArgumentException("managers: " + managers + " (expected: starting with " + manager + ")");
    }
  }

  /** Settings of a pod of the default role. */
  public PodSettings(PodAddress manager, String host, int port, PodVersion version, Duration askTimeout,
      Duration sendTimeout, int bufferSize, int maxInFlight, int maxMessageBytes, Duration terminationTimeout,
      Duration gossipInterval, Duration startTimeout, boolean clientOnly, boolean keepServingWhileManagerDown,
      ShardHasher hasher, Ticker ticker, ShardingObserver observer, int maxQueued, PodAddress advertise,
      java.util.List<PodAddress> managers, WireSecurity security) {
    this(manager, host, port, version, askTimeout, sendTimeout, bufferSize, maxInFlight, maxMessageBytes,
        terminationTimeout, gossipInterval, startTimeout, clientOnly, keepServingWhileManagerDown, hasher, ticker,
        observer, maxQueued, DEFAULT_MAX_QUEUE_TIME, advertise, managers, security, io.atoll.core.Pod.DEFAULT_ROLES);
  }

  /** The pod as the cluster knows it, under {@code id}: its version and roles. */
  public io.atoll.core.Pod pod(io.atoll.core.PodId id) {
    return new io.atoll.core.Pod(id, version, roles);
  }

  /** Settings with one manager address. */
  public PodSettings(PodAddress manager, String host, int port, PodVersion version, Duration askTimeout,
      Duration sendTimeout, int bufferSize, int maxInFlight, int maxMessageBytes, Duration terminationTimeout,
      Duration gossipInterval, Duration startTimeout, boolean clientOnly, boolean keepServingWhileManagerDown,
      ShardHasher hasher, Ticker ticker, ShardingObserver observer, int maxQueued, PodAddress advertise,
      WireSecurity security) {
    this(manager, host, port, version, askTimeout, sendTimeout, bufferSize, maxInFlight, maxMessageBytes,
        terminationTimeout, gossipInterval, startTimeout, clientOnly, keepServingWhileManagerDown, hasher, ticker,
        observer, maxQueued, advertise, java.util.List.of(manager), security);
  }

  /** These settings with {@code o} as the observer. */
  public PodSettings withObserver(ShardingObserver o) {
    return new PodSettings(manager, host, port, version, askTimeout, sendTimeout, bufferSize, maxInFlight,
        maxMessageBytes, terminationTimeout, gossipInterval, startTimeout, clientOnly, keepServingWhileManagerDown,
        hasher, ticker, o, maxQueued, maxQueueTime, advertise, managers, security, roles);
  }
}
