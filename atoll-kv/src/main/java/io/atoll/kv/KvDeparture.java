package io.atoll.kv;

/**
 * What a managed node's graceful leave ({@link KvServer#leave}) did.
 *
 * @param slotsLeft slots still owned when it unregistered (their keys are lost: 0 after a drain that finished)
 * @param keysMoved keys the node handed to other nodes since it started
 * @param slotsMoved slots the node handed to other nodes since it started
 * @param unregistered whether the manager heard it leave (if not, its lease runs out)
 */
public record KvDeparture(int slotsLeft, long keysMoved, long slotsMoved, boolean unregistered) {}
