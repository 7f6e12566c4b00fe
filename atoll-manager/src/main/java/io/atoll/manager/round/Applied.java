package io.atoll.manager.round;

import io.atoll.core.ClusterConfig;

/**
 * A round applied to a config.
 *
 * @param config the next config; the same instance when nothing changed
 * @param moved how many shards got a new owner
 */
public record Applied(ClusterConfig config, int moved) {}
