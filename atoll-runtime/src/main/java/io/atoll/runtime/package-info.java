/**
 * The API of a pod: {@link io.atoll.runtime.Sharding} (build, start, close, send), {@link
 * io.atoll.runtime.EntityRef}, {@link io.atoll.runtime.EntityType}, {@link
 * io.atoll.runtime.Entity} and its {@link io.atoll.runtime.EntityContext}, {@link
 * io.atoll.runtime.Reply}, {@link io.atoll.runtime.DeliveryException}, the {@link
 * io.atoll.runtime.ShardingObserver} and {@link io.atoll.runtime.DefaultCodec}.
 *
 * <p>API, except {@link io.atoll.runtime.PodProvider} and {@link io.atoll.runtime.PodSettings}:
 * the door to the pod behind this package, public only so that the pod can implement it. This
 * package imports nothing under {@code io.atoll.runtime.internal}, which is not API and uses this
 * package, never the reverse.
 */
package io.atoll.runtime;
