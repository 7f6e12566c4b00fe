package io.atoll.runtime.internal.cluster;

import io.atoll.core.ClusterConfig;
import io.atoll.core.PodId;
import io.atoll.transport.grpc.proto.ConfigBytes;
import io.atoll.transport.grpc.security.ManagerTrust;
import io.atoll.transport.grpc.proto.UnassignRequest;

/**
 * The gate every config passes before it reaches the {@link View}: it must carry a valid signature
 * of the cluster's manager key ({@link ManagerTrust}); and the newest signed config accepted, kept
 * as it arrived, is what this pod gossips on, so a pod passes on only what the manager signed, never
 * a config of its own making. A forged or foreign config is refused here and changes nothing.
 * Thread-safe.
 */
public final class SignedConfigs {

  private final ManagerTrust trust = new ManagerTrust();
  private volatile Newest newest;

  private record Newest(long epoch, ConfigBytes bytes) {}

  /** Trusting no manager key yet. */
  public SignedConfigs() {}

  /**
   * A config from the manager's own connection; its key becomes the trusted one.
   *
   * @throws io.grpc.StatusRuntimeException if it is unsigned, badly signed or does not decode
   */
  public ClusterConfig fromManager(ConfigBytes bytes) {
    return fromManager(bytes, true);
  }

  /**
   * A config from the manager's own connection; unless {@code mayChangeKey}, only with the key
   * trusted now (see {@link ManagerTrust#fromManager(ConfigBytes, boolean)}). When the key changes,
   * this config replaces the one gossiped on, whatever its epoch: peers that trust the new key
   * would refuse the old one.
   *
   * @throws io.grpc.StatusRuntimeException if it is unsigned, badly signed, does not decode, or
   *     changes the key when it may not
   */
  public synchronized ClusterConfig fromManager(ConfigBytes bytes, boolean mayChangeKey) {
    ClusterConfig c = trust.fromManager(bytes, mayChangeKey);
    Newest n = newest;
    if (n != null && !n.bytes().getSignerKey().equals(bytes.getSignerKey())) {
      newest = new Newest(c.epoch(), bytes);
    } else {
      remember(c, bytes);
    }
    return c;
  }

  /**
   * A config from a peer or a push: accepted only if signed by the trusted key.
   *
   * @throws io.grpc.StatusRuntimeException PERMISSION_DENIED if forged or foreign
   */
  public ClusterConfig fromPeer(ConfigBytes bytes, String from) {
    ClusterConfig c = trust.fromPeer(bytes, from);
    remember(c, bytes);
    return c;
  }

  /**
   * Checks that an Unassign request is signed by the trusted key, for pod {@code self}.
   *
   * @throws io.grpc.StatusRuntimeException PERMISSION_DENIED if not
   */
  public void checkUnassign(UnassignRequest request, PodId self) {
    trust.checkUnassign(request, self);
  }

  /** The newest signed config accepted, as it arrived (for gossip), or null before the first. */
  public ConfigBytes newest() {
    Newest n = newest;
    return n == null ? null : n.bytes();
  }

  private synchronized void remember(ClusterConfig c, ConfigBytes bytes) {
    Newest n = newest;
    if (n == null || c.epoch() > n.epoch()) {
      newest = new Newest(c.epoch(), bytes);
    }
  }
}
