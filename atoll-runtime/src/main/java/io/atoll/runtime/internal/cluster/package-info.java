/**
 * The pod's standing in the cluster: the {@link io.atoll.runtime.internal.cluster.View} of the
 * cluster config and this pod's identity, the {@link io.atoll.runtime.internal.cluster.Lease}
 * (all of its state), {@link io.atoll.runtime.internal.cluster.Gossip} between pods, and the
 * {@link io.atoll.runtime.internal.cluster.ManagerLink} (register, renew, watch, unregister).
 *
 * <p>Knows nothing of sending or hosting: what the rooms above must do about a new view or a
 * lapsed lease reaches them through the {@code Callback} interfaces here. Imports only the
 * {@code util} package of the runtime's internals.
 *
 * <p>Not API: internal to atoll-runtime, may change in any release.
 */
package io.atoll.runtime.internal.cluster;
