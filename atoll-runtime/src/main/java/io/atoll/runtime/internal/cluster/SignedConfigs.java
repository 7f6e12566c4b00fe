package io.atoll.runtime.internal.cluster;

import io.atoll.core.ClusterConfig;
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
    ClusterConfig c = trust.fromManager(bytes);
    remember(c, bytes);
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
   * Checks that an Unassign request is signed by the trusted key.
   *
   * @throws io.grpc.StatusRuntimeException PERMISSION_DENIED if not
   */
  public void checkUnassign(UnassignRequest request) {
    trust.checkUnassign(request);
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
