package io.atoll.kv.internal.cluster;

import io.atoll.core.Pod;
import io.atoll.core.PodAddress;
import io.atoll.core.PodId;
import io.atoll.core.PodVersion;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.HexFormat;

/**
 * How a KV node maps onto atoll-core's pod model. A node is a {@link Pod}: its id is the client
 * address and an incarnation kept in the data directory; its Redis node id (40 hex digits) is the
 * SHA-1 of that id, so every node derives the same name from the config; its cluster-bus port
 * travels in the pod's version text ({@code bus.<port>}), since core's pod has no other free field.
 */
public final class Nodes {
  private static final String BUS = "bus.";

  private Nodes() {}

  /** The Redis node id of a pod: 40 lowercase hex digits. */
  public static String nodeId(PodId id) {
    try {
      MessageDigest sha1 = MessageDigest.getInstance("SHA-1");
      byte[] d = sha1.digest((id.address() + "#" + id.incarnation()).getBytes(StandardCharsets.UTF_8));
      return HexFormat.of().formatHex(d);
    } catch (NoSuchAlgorithmException e) {
      throw new IllegalStateException("SHA-1 is required by every JDK", e);
    }
  }

  /** The pod of a node listening for clients at {@code host:port} and for the bus at {@code busPort}. */
  public static Pod pod(String host, int port, long incarnation, int busPort) {
    return new Pod(new PodId(new PodAddress(host, port), incarnation), new PodVersion(BUS + busPort));
  }

  /** The bus port of a node's pod; port + 10000 if its version does not say. */
  public static int busPort(Pod pod) {
    String v = pod.version().value();
    if (v.startsWith(BUS)) {
      try {
        return Integer.parseInt(v.substring(BUS.length()));
      } catch (NumberFormatException e) {
        // fall through: not one of ours
      }
    }
    return pod.address().port() + 10000;
  }
}
