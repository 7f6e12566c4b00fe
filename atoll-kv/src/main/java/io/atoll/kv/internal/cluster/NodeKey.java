package io.atoll.kv.internal.cluster;

import java.nio.charset.StandardCharsets;
import java.security.GeneralSecurityException;
import java.security.MessageDigest;
import java.util.HexFormat;
import javax.crypto.Mac;
import javax.crypto.spec.SecretKeySpec;

/**
 * Managed mode: the key by which the nodes of one cluster know each other on their client ports.
 * The shard manager gives it to every KV node it registers (derived from its own key and the
 * cluster id, so every manager of the cluster gives the same one; clients never see it). A node
 * opening a hand-off connection proves it with {@code CLUSTER ATOLL-NODE proof}, the proof being
 * HMAC-SHA256 of the target's node id under this key, so that only such a connection may send the
 * hand-off's internal commands ({@code ATOLL-IMPORTING}, {@code ATOLL-RETURN}, {@code
 * ATOLL-RETURN-BATCH}, {@code RESTORE-ASKING}): a client with the password cannot wipe or fill a
 * slot. Thread-safe: the key is set once the node registers and read by every event loop.
 */
public final class NodeKey {
  private static final byte[] CONTEXT = "atoll-kv-node-v1\0".getBytes(StandardCharsets.US_ASCII);

  private volatile SecretKeySpec key;

  /** Takes the key the manager gave; an empty one (a manager that gives none) is ignored. */
  public void set(byte[] bytes) {
    if (bytes.length > 0) {
      key = new SecretKeySpec(bytes.clone(), "HmacSHA256");
    }
  }

  /** Whether this node has a key yet (it registered with a manager that gives one). */
  public boolean known() {
    return key != null;
  }

  /** The proof a node sends to the node {@code targetNodeId}; null before the key is known. */
  public String proofFor(String targetNodeId) {
    SecretKeySpec k = key;
    return k == null ? null : HexFormat.of().formatHex(mac(k, targetNodeId));
  }

  /** Whether {@code presented} proves the key to the node {@code myNodeId} (constant time). */
  public boolean verifies(String myNodeId, byte[] presented) {
    SecretKeySpec k = key;
    if (k == null) {
      return false;
    }
    byte[] expected = HexFormat.of().formatHex(mac(k, myNodeId)).getBytes(StandardCharsets.US_ASCII);
    return MessageDigest.isEqual(expected, presented);
  }

  private static byte[] mac(SecretKeySpec k, String nodeId) {
    try {
      Mac mac = Mac.getInstance("HmacSHA256");
      mac.init(k);
      mac.update(CONTEXT);
      return mac.doFinal(nodeId.getBytes(StandardCharsets.US_ASCII));
    } catch (GeneralSecurityException e) {
      throw new IllegalStateException("HMAC-SHA256 is required by every JDK", e);
    }
  }
}
