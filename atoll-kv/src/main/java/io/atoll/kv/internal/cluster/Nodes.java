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
 * SHA-1 of that id, so every node derives the same name from the config; its cluster-bus port and
 * its TLS client port, if it has one, travel in the pod's version text ({@code bus.<port>} or
 * {@code bus.<port>.tls.<tls-port>}), since core's pod has no other free field. A replica says so
 * there too: {@code .of.<primary's node id>} at the end; in managed mode, so does a dead primary
 * whose replica took its slots over, on its tombstone: {@code .to.<that replica's node id>}.
 */
public final class Nodes {
  private static final String BUS = "bus.";
  private static final String TLS = ".tls.";
  /** Marks a replica: the Redis id of its primary follows (the last part of the version text). */
  private static final String OF = ".of.";
  /** Marks a dead primary taken over: the Redis id of its heir follows (the last part). */
  private static final String TO = ".to.";

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
    return pod(host, port, incarnation, busPort, 0);
  }

  /** As {@link #pod(String, int, long, int)}, with a TLS client port ({@code 0}: none). */
  public static Pod pod(String host, int port, long incarnation, int busPort, int tlsPort) {
    return new Pod(new PodId(new PodAddress(host, port), incarnation),
        new PodVersion(BUS + busPort + (tlsPort > 0 ? TLS + tlsPort : "")));
  }

  /** The Redis id of the primary a node's pod replicates, or null for a primary. */
  public static String primaryOf(Pod pod) {
    String v = pod.version().value();
    int at = v.indexOf(OF);
    return v.startsWith(BUS) && at >= 0 ? v.substring(at + OF.length()) : null;
  }

  /** {@code pod} as a replica of the node {@code primaryNodeId}, or as a primary if that is null. */
  public static Pod withPrimary(Pod pod, String primaryNodeId) {
    String v = ports(pod.version().value());
    return new Pod(pod.id(), new PodVersion(primaryNodeId == null ? v : v + OF + primaryNodeId));
  }

  /**
   * Managed mode: the Redis id of the node that took over the slots, migration marks and import
   * records of the dead primary {@code pod}, or null if none did.
   */
  public static String heirOf(Pod pod) {
    String v = pod.version().value();
    int at = v.indexOf(TO);
    return v.startsWith(BUS) && at >= 0 ? v.substring(at + TO.length()) : null;
  }

  /** {@code pod}, a dead primary, as taken over by the node {@code heirNodeId}. */
  public static Pod withHeir(Pod pod, String heirNodeId) {
    return new Pod(pod.id(), new PodVersion(ports(pod.version().value()) + TO + heirNodeId));
  }

  /** The version text without its replica or heir part. */
  private static String ports(String v) {
    int of = v.indexOf(OF);
    int to = v.indexOf(TO);
    int at = of < 0 ? to : to < 0 ? of : Math.min(of, to);
    return at < 0 ? v : v.substring(0, at);
  }

  /** The TLS client port of a node's pod, or 0 if it has none (or its version does not say). */
  public static int tlsPort(Pod pod) {
    String v = ports(pod.version().value());
    int at = v.indexOf(TLS);
    if (!v.startsWith(BUS) || at < 0) {
      return 0;
    }
    try {
      int p = Integer.parseInt(v.substring(at + TLS.length()));
      return p > 0 && p <= 65535 ? p : 0;
    } catch (NumberFormatException e) {
      return 0;
    }
  }

  /**
   * The port a client reaches the node {@code id} of {@code config} on: its TLS port for a client
   * that came over TLS (if the node has one), else its plain client port.
   */
  public static int clientPort(io.atoll.core.ClusterConfig config, PodId id, boolean tls) {
    if (tls) {
      var e = config.pod(id);
      if (e.isPresent()) {
        int p = tlsPort(e.get().pod());
        if (p > 0) {
          return p;
        }
      }
    }
    return id.address().port();
  }

  /** The bus port of a node's pod; port + 10000 if its version does not say. */
  public static int busPort(Pod pod) {
    String v = ports(pod.version().value());
    if (v.startsWith(BUS)) {
      int end = v.indexOf(TLS);
      try {
        return Integer.parseInt(v.substring(BUS.length(), end < 0 ? v.length() : end));
      } catch (NumberFormatException e) {
        // fall through: not one of ours
      }
    }
    return pod.address().port() + 10000;
  }
}
