package io.atoll.kv.internal.managed;

import io.atoll.core.PodAddress;
import io.atoll.transport.grpc.Wire;
import io.atoll.transport.grpc.proto.PingRequest;
import io.atoll.transport.grpc.proto.PodServiceGrpc;
import io.atoll.transport.grpc.security.Role;
import io.atoll.transport.grpc.security.WireSecurity;
import io.grpc.ManagedChannel;
import io.grpc.StatusRuntimeException;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;

/**
 * {@link ManagerOutage}'s checks over the network: a fresh TCP connect to a manager, and a Ping to
 * another node's control port (every node's Ping tells how long ago its last renewal succeeded).
 * One channel per peer, kept while the peer is asked (a cluster has few nodes) and closed with
 * this. Thread-safe.
 */
final class ControlProbes implements ManagerOutage.Probes, AutoCloseable {

  private final WireSecurity security;
  private final Map<PodAddress, ManagedChannel> channels = new ConcurrentHashMap<>();
  private volatile boolean closed;

  ControlProbes(WireSecurity security) {
    this.security = security;
  }

  @Override
  public boolean refused(PodAddress manager) {
    return Wire.probe(manager, 1000) == Wire.Probe.REFUSED;
  }

  @Override
  public long peerRenewedMillisAgo(PodAddress peer) {
    if (closed) {
      return -1;
    }
    ManagedChannel ch = channels.computeIfAbsent(peer, a -> Wire.channel(a, security, Role.POD));
    if (closed) {
      // close() ran between the check above and the put: it may not have seen this channel.
      // Either close() finds the channel in the map or this sees closed, so none is left open.
      channels.remove(peer, ch);
      Wire.close(ch);
      return -1;
    }
    try {
      return PodServiceGrpc.newBlockingStub(Wire.reconnecting(ch)).withDeadlineAfter(500, TimeUnit.MILLISECONDS)
          .ping(PingRequest.getDefaultInstance()).getLeaseRenewedMillisAgo();
    } catch (StatusRuntimeException e) {
      return -1;
    }
  }

  @Override
  public void close() {
    closed = true;
    channels.values().forEach(Wire::close);
    channels.clear();
  }
}
