/**
 * Metrics of the shard manager with Micrometer: {@link io.atoll.manager.metrics.ManagerMetrics} is
 * a {@link io.atoll.manager.ManagerObserver} that counts into any {@code MeterRegistry}.
 * Micrometer is an optional dependency of the manager: add {@code io.micrometer:micrometer-core}
 * (and a registry) to use this package.
 *
 * <p>API.
 */
package io.atoll.manager.metrics;
