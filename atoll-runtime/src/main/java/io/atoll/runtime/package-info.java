/**
 * The API of a pod: {@link io.atoll.runtime.Sharding} (build, start, close, send), {@link
 * io.atoll.runtime.EntityRef}, {@link io.atoll.runtime.EntityType}, {@link
 * io.atoll.runtime.Entity} and its {@link io.atoll.runtime.EntityContext}, {@link
 * io.atoll.runtime.Reply}, {@link io.atoll.runtime.DeliveryException} and the {@link
 * io.atoll.runtime.ShardingObserver}.
 *
 * <p>API. Everything under {@code io.atoll.runtime.internal} is not.
 */
package io.atoll.runtime;
