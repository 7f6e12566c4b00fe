/**
 * The pod behind {@link io.atoll.runtime.Sharding}: {@link io.atoll.runtime.internal.PodRuntime}
 * builds the rooms in the sub-packages ({@code send}, {@code host}, {@code cluster}, {@code codec},
 * {@code util}), connects each room's callback to the room that acts on it, and runs start, the
 * timer's chores and close; {@code PodService} is the pod's gRPC face.
 *
 * <p>The top of the runtime's internals: it may import every room, and no room imports it.
 *
 * <p>Not API: internal to atoll-runtime, may change in any release. Its public types are public
 * only for the API package.
 */
package io.atoll.runtime.internal;
