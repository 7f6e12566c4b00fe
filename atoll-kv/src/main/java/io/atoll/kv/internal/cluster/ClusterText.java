package io.atoll.kv.internal.cluster;

import io.atoll.core.ClusterConfig;
import io.atoll.core.PodEntry;
import io.atoll.core.PodId;
import io.atoll.core.PodStatus;
import io.atoll.kv.internal.resp.Reply;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/**
 * Renders a {@link ClusterView} as Redis 7 does, byte for byte where clients parse it: the lines
 * of CLUSTER NODES, the arrays of CLUSTER SLOTS and SHARDS, the fields of CLUSTER INFO. A client
 * that came over TLS ({@code tls}) is given each node's TLS port where NODES and SLOTS name one
 * port (as Valkey does), so that it stays on TLS; SHARDS gives both, as Redis 7 does. Pure.
 */
public final class ClusterText {
  private ClusterText() {}

  /** Contiguous runs of one owner: {@code [start, end]} pairs per owner, ascending. */
  public static Map<PodId, List<int[]>> ranges(ClusterConfig c) {
    Map<PodId, List<int[]>> result = new TreeMap<>();
    int s = 0;
    int n = c.size();
    while (s < n) {
      PodId o = c.owner(s);
      int e = s;
      while (e + 1 < n && o != null && o.equals(c.owner(e + 1))) {
        e++;
      }
      if (o != null) {
        result.computeIfAbsent(o, k -> new ArrayList<>()).add(new int[] {s, e});
      }
      s = e + 1;
    }
    return result;
  }

  /**
   * CLUSTER NODES: one line per active node, each ending in a newline. A replica's line names its
   * primary and shows the primary's config epoch, as Redis does (a replica's own epoch orders its
   * role changes here, and is nobody else's business).
   */
  public static String nodes(ClusterView v, Health h, boolean tls) {
    Map<PodId, List<int[]>> ranges = ranges(v.config());
    StringBuilder sb = new StringBuilder();
    for (PodEntry e : v.config().pods()) {
      if (e.status() != PodStatus.ACTIVE) {
        continue;
      }
      PodId id = e.id();
      boolean me = id.equals(v.me());
      PodId primary = v.primaryOf(id);
      sb.append(v.nodeId(id)).append(' ')
          .append(id.address().host()).append(':').append(Nodes.clientPort(v.config(), id, tls))
          .append('@').append(Nodes.busPort(e.pod())).append(' ');
      sb.append(me ? "myself," : "").append(primary == null ? "master" : "slave");
      if (!me && v.failed().contains(id)) {
        sb.append(",fail");
      } else if (!me && h.suspected(id)) {
        sb.append(",fail?");
      }
      sb.append(' ').append(primary == null ? "-" : v.nodeId(primary)).append(' ');
      sb.append(me ? 0 : h.pingSent(id)).append(' ').append(me ? 0 : h.pongReceived(id)).append(' ');
      long epoch = primary == null ? e.epoch() : v.config().pod(primary).map(PodEntry::epoch).orElse(e.epoch());
      sb.append(epoch).append(' ');
      sb.append(me || h.linkUp(id) ? "connected" : "disconnected");
      for (int[] r : ranges.getOrDefault(id, List.of())) {
        sb.append(' ').append(r[0]);
        if (r[1] != r[0]) {
          sb.append('-').append(r[1]);
        }
      }
      if (me) {
        new TreeMap<>(v.migrating()).forEach((slot, to) ->
            sb.append(" [").append(slot).append("->-").append(v.nodeId(to)).append(']'));
        new TreeMap<>(v.importing()).forEach((slot, from) ->
            sb.append(" [").append(slot).append("-<-").append(v.nodeId(from)).append(']'));
      }
      sb.append('\n');
    }
    return sb.toString();
  }

  /**
   * CLUSTER SLOTS: {@code [start, end, [ip, port, id, {}], replicas...]} per range, ascending by
   * start; a replica that failed is left out, as Redis leaves it.
   */
  public static void slots(ClusterView v, Reply r, boolean tls) {
    List<Object[]> all = new ArrayList<>();
    ranges(v.config()).forEach((owner, list) -> list.forEach(range -> all.add(new Object[] {range, owner})));
    all.sort((a, b) -> Integer.compare(((int[]) a[0])[0], ((int[]) b[0])[0]));
    r.array(all.size());
    for (Object[] o : all) {
      int[] range = (int[]) o[0];
      PodId owner = (PodId) o[1];
      List<PodId> replicas = new ArrayList<>();
      for (PodId rep : v.replicasOf(owner)) {
        if (!v.failed().contains(rep)) {
          replicas.add(rep);
        }
      }
      r.array(3 + replicas.size());
      r.integer(range[0]);
      r.integer(range[1]);
      node(v, r, owner, tls);
      for (PodId rep : replicas) {
        node(v, r, rep, tls);
      }
    }
  }

  private static void node(ClusterView v, Reply r, PodId id, boolean tls) {
    r.array(4);
    r.bulk(id.address().host());
    r.integer(Nodes.clientPort(v.config(), id, tls));
    r.bulk(v.nodeId(id));
    r.map(0);
  }

  /** As {@link #shards(ClusterView, Health, Reply, long)} with no replication offset known. */
  public static void shards(ClusterView v, Health h, Reply r) {
    shards(v, h, r, 0);
  }

  /**
   * CLUSTER SHARDS: one shard per primary, its replicas after it, Redis 7's fields; {@code
   * myOffset} is this node's replication offset (others' are not gossiped here: 0).
   */
  public static void shards(ClusterView v, Health h, Reply r, long myOffset) {
    Map<PodId, List<int[]>> ranges = ranges(v.config());
    List<PodEntry> primaries = new ArrayList<>();
    for (PodEntry e : v.config().pods()) {
      if (e.status() == PodStatus.ACTIVE && v.primaryOf(e.id()) == null) {
        primaries.add(e);
      }
    }
    r.array(primaries.size());
    for (PodEntry e : primaries) {
      PodId id = e.id();
      r.map(2);
      r.bulk("slots");
      List<int[]> list = ranges.getOrDefault(id, List.of());
      r.array(list.size() * 2);
      for (int[] range : list) {
        r.integer(range[0]);
        r.integer(range[1]);
      }
      r.bulk("nodes");
      List<PodId> replicas = v.replicasOf(id);
      r.array(1 + replicas.size());
      shardNode(v, r, e, false, myOffset);
      for (PodId rep : replicas) {
        shardNode(v, r, v.config().pod(rep).orElseThrow(), true, myOffset);
      }
    }
  }

  private static void shardNode(ClusterView v, Reply r, PodEntry e, boolean replica, long myOffset) {
    PodId id = e.id();
    int tlsPort = Nodes.tlsPort(e.pod());
    r.map(tlsPort > 0 ? 8 : 7);
    r.bulk("id");
    r.bulk(v.nodeId(id));
    r.bulk("port");
    r.integer(id.address().port());
    if (tlsPort > 0) {
      r.bulk("tls-port");
      r.integer(tlsPort);
    }
    r.bulk("ip");
    r.bulk(id.address().host());
    r.bulk("endpoint");
    r.bulk(id.address().host());
    r.bulk("role");
    r.bulk(replica ? "replica" : "master");
    r.bulk("replication-offset");
    r.integer(id.equals(v.me()) ? myOffset : 0);
    r.bulk("health");
    r.bulk(v.failed().contains(id) ? "fail" : "online");
  }

  /** CLUSTER INFO, CRLF-separated lines. */
  public static String info(ClusterView v, Health h) {
    int pfail = 0;
    int fail = 0;
    Map<PodId, Integer> owned = v.config().ownedCounts();
    int size = 0;
    for (Map.Entry<PodId, Integer> e : owned.entrySet()) {
      if (e.getValue() > 0) {
        size++;
        if (v.failed().contains(e.getKey())) {
          fail += e.getValue();
        } else if (h.suspected(e.getKey())) {
          pfail += e.getValue();
        }
      }
    }
    int assigned = v.assignedSlots();
    return "cluster_state:" + (v.ok() ? "ok" : "fail") + "\r\n"
        + "cluster_slots_assigned:" + assigned + "\r\n"
        + "cluster_slots_ok:" + (assigned - pfail - fail) + "\r\n"
        + "cluster_slots_pfail:" + pfail + "\r\n"
        + "cluster_slots_fail:" + fail + "\r\n"
        + "cluster_known_nodes:" + v.knownNodes() + "\r\n"
        + "cluster_size:" + size + "\r\n"
        + "cluster_current_epoch:" + v.config().epoch() + "\r\n"
        + "cluster_my_epoch:" + v.myEpoch() + "\r\n"
        + "cluster_stats_messages_sent:" + h.messagesSent() + "\r\n"
        + "cluster_stats_messages_received:" + h.messagesReceived() + "\r\n"
        + "total_cluster_links_buffer_limit_exceeded:0\r\n";
  }
}
