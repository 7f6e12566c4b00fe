/**
 * The receiving side of a pod: the {@link io.atoll.runtime.internal.host.EntityHost} (which
 * shards this pod serves, under which epoch, and the release and fencing of them), each entity's
 * {@link io.atoll.runtime.internal.host.EntityInstance} (mailbox and activation) kept per shard and
 * type in an {@link io.atoll.runtime.internal.host.InstanceTable}, and the
 * {@link io.atoll.runtime.internal.host.InboundStream} that takes other pods' messages off a
 * Deliver stream and answers them. Also the mailbox entry every message becomes
 * ({@link io.atoll.runtime.internal.host.Delivery}) and the entity types as the pod runs them.
 *
 * <p>Reads the {@code cluster} package's view and lease; reports upward (a shard became served, a
 * release finished) through {@code EntityHost.Callback}. Knows nothing of sending.
 *
 * <p>Not API: internal to atoll-runtime, may change in any release.
 */
package io.atoll.runtime.internal.host;
