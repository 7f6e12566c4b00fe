package io.atoll.transport.grpc.security;

import com.google.protobuf.ByteString;
import io.atoll.core.ClusterConfig;
import io.atoll.core.PodId;
import io.atoll.transport.grpc.Wire;
import io.atoll.transport.grpc.proto.ConfigBytes;
import io.atoll.transport.grpc.proto.UnassignRequest;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import java.security.GeneralSecurityException;
import java.security.KeyFactory;
import java.security.PublicKey;
import java.security.Signature;
import java.security.spec.X509EncodedKeySpec;
import java.util.List;

/**
 * A pod's trust in its manager's key: configs and Unassign requests count only with a valid
 * signature by it. The key is learned from the manager's own connection (Register, the first
 * config, the watch stream), which mutual TLS authenticates; a config from anyone else (a peer's
 * gossip, a push) must carry that very key and a valid signature. Verification happens once per
 * distinct config received, never on the message path. Thread-safe.
 */
public final class ManagerTrust {

  private volatile Key key;
  /** The signature last verified with the current key, so the same config gossiped again costs a compare. */
  private volatile Verified lastVerified;

  private record Verified(Key key, ByteString signature, ByteString encoded) {}

  private record Key(ByteString encoded, PublicKey publicKey) {}

  /** Trusting no key yet. */
  public ManagerTrust() {}

  /**
   * A config from the manager's own connection: believed with the key it carries, which becomes
   * the key this pod trusts.
   *
   * @throws StatusRuntimeException PERMISSION_DENIED if it is unsigned or its signature is wrong;
   *     INVALID_ARGUMENT if it does not decode
   */
  public ClusterConfig fromManager(ConfigBytes bytes) {
    return fromManager(bytes, true);
  }

  /**
   * As {@link #fromManager(ConfigBytes)}; unless {@code mayChangeKey}, only with the key trusted
   * now (if any). A pod lets a manager change its key only where it checked first that the manager
   * answers under a term at least the newest it has seen: a deposed manager still answering on an
   * old stream cannot take the pod back to its key.
   *
   * @throws StatusRuntimeException FAILED_PRECONDITION for a key change that is not allowed, else as
   *     {@link #fromManager(ConfigBytes)}
   */
  public ClusterConfig fromManager(ConfigBytes bytes, boolean mayChangeKey) {
    Key k = key;
    if (k != null && !mayChangeKey && !k.encoded().equals(bytes.getSignerKey())) {
      throw Status.FAILED_PRECONDITION.withDescription("config from the manager ignored: signed with another key"
          + " than the one trusted (expected: the same; a new key is adopted at Register, under a term at least"
          + " the newest seen)").asRuntimeException();
    }
    if (k == null || !k.encoded().equals(bytes.getSignerKey())) {
      k = parse(bytes.getSignerKey());
    }
    check(k, bytes, "the manager");
    key = k;
    return Wire.config(bytes);
  }

  /**
   * A config from a peer (gossip) or a push.
   *
   * @throws StatusRuntimeException PERMISSION_DENIED unless it is signed by the key this pod
   *     trusts; FAILED_PRECONDITION while it trusts none; INVALID_ARGUMENT if it does not decode
   */
  public ClusterConfig fromPeer(ConfigBytes bytes, String from) {
    Key k = key;
    if (k == null) {
      throw Status.FAILED_PRECONDITION.withDescription("config from " + from
          + " ignored: this pod has no manager key yet").asRuntimeException();
    }
    if (!k.encoded().equals(bytes.getSignerKey())) {
      throw denied("config from " + from + " refused: not signed by this cluster's manager key");
    }
    check(k, bytes, from);
    return Wire.config(bytes);
  }

  /**
   * Checks the signature of an Unassign request received by pod {@code self} against the trusted
   * key.
   *
   * @throws StatusRuntimeException PERMISSION_DENIED if it is unsigned or forged (a made-up term,
   *     epoch, shard list, targets or termination timeout, or one signed for another pod),
   *     FAILED_PRECONDITION while this pod trusts no key, INVALID_ARGUMENT if a target is malformed
   */
  public void checkUnassign(UnassignRequest r, PodId self) {
    Key k = key;
    if (k == null) {
      throw Status.FAILED_PRECONDITION.withDescription("unassign refused: this pod has no manager key yet")
          .asRuntimeException();
    }
    List<PodId> targets;
    try {
      targets = r.getTargetsList().stream().map(Wire::podId).toList();
    } catch (RuntimeException e) {
      throw Status.INVALID_ARGUMENT.withDescription("unassign refused: a malformed target: " + e.getMessage())
          .asRuntimeException();
    }
    byte[] payload = ConfigSigner.unassignPayload(r.getClusterId(), r.getManagerTerm(), r.getNewEpoch(), self,
        r.getShardsList(), targets, r.getTerminationTimeoutMillis());
    if (r.getSignature().isEmpty() || !verify(k.publicKey(), ConfigSigner.UNASSIGN_CONTEXT, payload,
        r.getSignature().toByteArray())) {
      throw denied("unassign of term " + r.getManagerTerm() + " refused: not signed by this cluster's manager key");
    }
  }

  /** Whether a key is trusted yet. */
  public boolean hasKey() {
    return key != null;
  }

  private void check(Key k, ConfigBytes bytes, String from) {
    ByteString sig = bytes.getSignature();
    if (sig.isEmpty()) {
      throw denied("config from " + from + " refused: unsigned");
    }
    Verified v = lastVerified;
    if (v != null && v.key() == k && v.signature().equals(sig) && v.encoded().equals(bytes.getEncoded())) {
      return; // exactly what was verified last: a compare instead of a verification
    }
    if (!verify(k.publicKey(), ConfigSigner.CONFIG_CONTEXT, bytes.getEncoded().toByteArray(), sig.toByteArray())) {
      throw denied("config from " + from + " refused: its signature does not verify");
    }
    lastVerified = new Verified(k, sig, bytes.getEncoded());
  }

  private static Key parse(ByteString encoded) {
    if (encoded.isEmpty()) {
      throw denied("config refused: no signer key (expected: signed by the manager)");
    }
    try {
      return new Key(encoded, KeyFactory.getInstance("Ed25519")
          .generatePublic(new X509EncodedKeySpec(encoded.toByteArray())));
    } catch (GeneralSecurityException e) {
      throw denied("config refused: unreadable signer key (expected: Ed25519): " + e.getMessage());
    }
  }

  static boolean verify(PublicKey key, byte[] context, byte[] payload, byte[] signature) {
    try {
      Signature s = Signature.getInstance("Ed25519");
      s.initVerify(key);
      s.update(context);
      s.update(payload);
      return s.verify(signature);
    } catch (GeneralSecurityException e) {
      return false;
    }
  }

  private static StatusRuntimeException denied(String description) {
    return Status.PERMISSION_DENIED.withDescription(description).asRuntimeException();
  }
}
