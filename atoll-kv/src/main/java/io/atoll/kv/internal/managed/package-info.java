/**
 * Managed mode (not API): a KV node as a pod of a shard manager. The manager places the 16384
 * slots (shard {@code s + 1} is slot {@code s}); the node registers, holds a lease and fences
 * itself without one, follows the manager's configs, and turns each hand-off the manager asks for
 * into a live migration of the slot's keys to its new owner before it releases the slot.
 * Imports: {@code cluster} and {@code store} of this module, atoll-core, the gRPC transport (and its
 * security package), and the runtime's {@code ManagerAddresses} (following the leading manager).
 */
package io.atoll.kv.internal.managed;
