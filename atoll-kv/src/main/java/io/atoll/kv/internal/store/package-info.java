/**
 * The slot store: keys grouped by hash slot (one small map and one lock per slot), so that
 * COUNTKEYSINSLOT, GETKEYSINSLOT and migration touch one slot only; lazy and active expiry;
 * approximate memory accounting. Not API.
 */
package io.atoll.kv.internal.store;
