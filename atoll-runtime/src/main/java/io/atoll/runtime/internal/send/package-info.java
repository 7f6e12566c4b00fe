/**
 * The sending side of a pod: the {@link io.atoll.runtime.internal.send.Router} (one entry for
 * every message sent from this pod), one {@code ShardRoute} per shard (order, buffering while the
 * owner is unknown or moving, retries after refusals), the {@link
 * io.atoll.runtime.internal.send.Pending} each message is from send to answer, the
 * {@code Timeouts} that bound and expire them, and the {@link
 * io.atoll.runtime.internal.send.PeerClients} that stream them to other pods.
 *
 * <p>Reads the {@code cluster} package's view, hands local messages to the {@code host} package,
 * and reports what it learns of other pods (a refusal under a newer claim, a broken stream)
 * through {@code Router.Callback}.
 *
 * <p>Not API: internal to atoll-runtime, may change in any release.
 */
package io.atoll.runtime.internal.send;
