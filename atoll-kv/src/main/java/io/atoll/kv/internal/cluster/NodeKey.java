package io.atoll.kv.internal.cluster;

import java.nio.charset.StandardCharsets;
import java.security.GeneralSecurityException;
import java.security.MessageDigest;
import java.security.SecureRandom;
import java.util.HexFormat;
import javax.crypto.Mac;
import javax.crypto.spec.SecretKeySpec;

/**
 * Managed mode: the key by which the nodes of one cluster know each other on their client ports.
 * The shard manager gives it to every KV node it registers (derived from its own key and the
 * cluster id, so every manager of the cluster gives the same one; clients never see it).
 *
 * <p>A node opening a hand-off connection proves it by challenge and response: {@code CLUSTER
 * ATOLL-NODE} with no argument answers a fresh random nonce, kept on that connection for one use,
 * and {@code CLUSTER ATOLL-NODE proof} must then carry HMAC-SHA256 of the target's node id and
 * that nonce under this key. A proof seen on the wire is worth nothing on another connection or a
 * second time, and a proof for one node is refused by every other. Only a connection that proved
 * it may send the hand-off's internal commands ({@code ATOLL-IMPORTING}, {@code ATOLL-RETURN},
 * {@code ATOLL-RETURN-BATCH}, {@code RESTORE-ASKING}): a client with the password cannot wipe a
 * slot being imported (a FRESH {@code ATOLL-IMPORTING}) nor drain one (a return). It can still
 * write into a slot being imported with {@code ASKING} and a plain {@code RESTORE ... REPLACE} (or
 * any write), as in Redis cluster: ASKING writes are the clients' normal way to reach a slot in
 * migration, and they are writes of a client with the password like any other.
 *
 * <p>Thread-safe: the key is set once the node registers and read by every event loop.
 */
public final class NodeKey {
  private static final byte[] CONTEXT = "atoll-kv-node-v2\0".getBytes(StandardCharsets.US_ASCII);
  private static final SecureRandom RANDOM = new SecureRandom();
  /** The nonce's length in bytes (hex on the wire: twice as many characters). */
  public static final int NONCE_BYTES = 16;

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

  /** A fresh random challenge, in hex. */
  public static String nonce() {
    byte[] b = new byte[NONCE_BYTES];
    RANDOM.nextBytes(b);
    return HexFormat.of().formatHex(b);
  }

  /**
   * The proof a node sends to the node {@code targetNodeId} that challenged it with {@code nonce};
   * null before the key is known.
   */
  public String proofFor(String targetNodeId, String nonce) {
    SecretKeySpec k = key;
    return k == null ? null : HexFormat.of().formatHex(mac(k, targetNodeId, nonce));
  }

  /**
   * Whether {@code presented} proves the key to the node {@code myNodeId} that challenged with
   * {@code nonce} (compared in constant time).
   */
  public boolean verifies(String myNodeId, String nonce, byte[] presented) {
    SecretKeySpec k = key;
    if (k == null) {
      return false;
    }
    byte[] expected = HexFormat.of().formatHex(mac(k, myNodeId, nonce)).getBytes(StandardCharsets.US_ASCII);
    return MessageDigest.isEqual(expected, presented);
  }

  private static byte[] mac(SecretKeySpec k, String nodeId, String nonce) {
    try {
      Mac mac = Mac.getInstance("HmacSHA256");
      mac.init(k);
      mac.update(CONTEXT);
      // Node ids are fixed-length hex and nonces hex: the NUL keeps the two fields apart anyway.
      mac.update(nodeId.getBytes(StandardCharsets.US_ASCII));
      mac.update((byte) 0);
      return mac.doFinal(nonce.getBytes(StandardCharsets.US_ASCII));
    } catch (GeneralSecurityException e) {
      throw new IllegalStateException("HMAC-SHA256 is required by every JDK", e);
    }
  }
}
