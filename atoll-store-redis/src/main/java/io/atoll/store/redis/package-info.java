/**
 * The assignment store in Redis, through Lettuce: API ({@link io.atoll.store.redis.RedisAssignmentStore}
 * and its connection options, {@link io.atoll.store.redis.RedisStoreOptions}, parsed from a
 * {@code redis://} or {@code rediss://} URI).
 *
 * <p>The state is one hash saved by a Lua script that compares the version and the term; the
 * leadership is a key taken with {@code SET NX PX} under a term from {@code INCR}; changes are
 * published on a channel that watches subscribe to.
 */
package io.atoll.store.redis;
