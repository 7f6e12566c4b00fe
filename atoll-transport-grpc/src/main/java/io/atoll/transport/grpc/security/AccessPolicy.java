package io.atoll.transport.grpc.security;

import io.atoll.transport.grpc.proto.PodServiceGrpc;
import io.atoll.transport.grpc.proto.ShardManagerServiceGrpc;
import java.util.EnumSet;
import java.util.Map;
import java.util.Set;

/**
 * Which roles may call which RPC of {@code atoll.proto}. Anything not listed is refused (a new RPC
 * is closed until it is added here).
 *
 * <ul>
 *   <li>Only the manager may change what a pod serves: {@code Unassign} and {@code PushConfig}.
 *   <li>Only pods exchange messages, gossip and carried state, and only pods register, renew and unregister
 *       (as themselves: the manager also checks each call's incarnation credential).
 *   <li>Operators ({@code admin}) read the cluster and ask for a rebalance round.
 * </ul>
 */
public final class AccessPolicy {

  private static final Set<Role> ANY = EnumSet.allOf(Role.class);
  private static final Map<String, Set<Role>> ALLOWED = Map.ofEntries(
      Map.entry(PodServiceGrpc.getDeliverMethod().getFullMethodName(), EnumSet.of(Role.POD)),
      Map.entry(PodServiceGrpc.getGossipMethod().getFullMethodName(), EnumSet.of(Role.POD)),
      Map.entry(PodServiceGrpc.getCarryStateMethod().getFullMethodName(), EnumSet.of(Role.POD)),
      Map.entry(PodServiceGrpc.getPingMethod().getFullMethodName(), ANY),
      Map.entry(PodServiceGrpc.getUnassignMethod().getFullMethodName(), EnumSet.of(Role.MANAGER)),
      Map.entry(PodServiceGrpc.getPushConfigMethod().getFullMethodName(), EnumSet.of(Role.MANAGER)),
      Map.entry(ShardManagerServiceGrpc.getRegisterMethod().getFullMethodName(), EnumSet.of(Role.POD)),
      Map.entry(ShardManagerServiceGrpc.getRenewLeaseMethod().getFullMethodName(), EnumSet.of(Role.POD)),
      Map.entry(ShardManagerServiceGrpc.getUnregisterMethod().getFullMethodName(), EnumSet.of(Role.POD)),
      Map.entry(ShardManagerServiceGrpc.getNotifyUnhealthyPodMethod().getFullMethodName(), EnumSet.of(Role.POD)),
      Map.entry(ShardManagerServiceGrpc.getReleasedMethod().getFullMethodName(), EnumSet.of(Role.POD)),
      Map.entry(ShardManagerServiceGrpc.getGetAssignmentsMethod().getFullMethodName(), ANY),
      Map.entry(ShardManagerServiceGrpc.getWatchMethod().getFullMethodName(), ANY),
      Map.entry(ShardManagerServiceGrpc.getRebalanceMethod().getFullMethodName(), EnumSet.of(Role.ADMIN)));

  private AccessPolicy() {}

  /** The roles that may call {@code fullMethodName}; empty for an RPC this policy does not know. */
  public static Set<Role> allowed(String fullMethodName) {
    return ALLOWED.getOrDefault(fullMethodName, Set.of());
  }
}
