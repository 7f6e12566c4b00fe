/**
 * {@code atoll kv-demo} (not API): a shard manager and Atoll KV nodes as processes under a
 * verifying Lettuce client; a node joins, one leaves gracefully, one is killed; then every
 * acknowledged write is read back.
 */
package io.atoll.server.kvdemo;
