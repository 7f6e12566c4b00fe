/**
 * Metrics of a pod with Micrometer: {@link io.atoll.runtime.metrics.PodMetrics} is a {@link
 * io.atoll.runtime.ShardingObserver} that counts into any {@code MeterRegistry}. Micrometer is an
 * optional dependency of the runtime: add {@code io.micrometer:micrometer-core} (and a registry)
 * to use this package.
 *
 * <p>API.
 */
package io.atoll.runtime.metrics;
