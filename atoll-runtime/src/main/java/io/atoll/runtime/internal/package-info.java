/**
 * The pod behind {@link io.atoll.runtime.Sharding}: {@code PodRuntime}
 * builds the rooms in the sub-packages ({@code send}, {@code host}, {@code cluster}, {@code codec},
 * {@code util}), connects each room's callback to the room that acts on it, and runs start, the
 * timer's chores and close; {@code PodService} is the pod's gRPC face.
 *
 * <p>The top of the runtime's internals: it may import every room, and no room imports it.
 *
 * <p>Not API: internal to atoll-runtime, may change in any release. The API package reaches it
 * only through {@link io.atoll.runtime.PodProvider}, which {@code PodRuntimeProvider} implements
 * (named in {@code META-INF/services}), its one public type.
 */
package io.atoll.runtime.internal;
