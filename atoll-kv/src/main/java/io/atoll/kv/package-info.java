/**
 * Atoll KV's API: start a Redis-Cluster-compatible node with {@link io.atoll.kv.KvServer#start}
 * and {@link io.atoll.kv.KvSettings}. Everything under {@code io.atoll.kv.internal} is not API.
 */
package io.atoll.kv;
