/**
 * Hash slots, the key space of Atoll KV: API.
 *
 * <p>{@link io.atoll.core.slots.KeySlots} maps a key to one of 16384 slots exactly as Redis
 * Cluster does (CRC16-XMODEM and hash tags); {@link io.atoll.core.slots.SlotState} is the state of
 * a shard or slot in a {@link io.atoll.core.ClusterConfig} (after Garnet's). Pure and thread-safe.
 */
package io.atoll.core.slots;
