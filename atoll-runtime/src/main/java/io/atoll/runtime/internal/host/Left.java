package io.atoll.runtime.internal.host;

import io.atoll.core.spi.StoredState;

/**
 * What one durable activation left when its shard was handed off: its entity and the state the
 * store holds for it.
 */
public record Left(String type, String id, StoredState state) {}
