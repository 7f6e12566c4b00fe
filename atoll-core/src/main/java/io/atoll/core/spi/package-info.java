/**
 * The service-provider interfaces that adapters implement: API, for adapter authors.
 *
 * <p>{@link io.atoll.core.spi.AssignmentStore} is where the shard manager keeps its state (one
 * versioned blob, compare-and-set, durable once a save returns); the file store, and later Redis
 * and etcd stores, implement it and run the one store contract test. {@link
 * io.atoll.core.spi.PodHealth} is a source of truth about whether a pod is gone. Failures are
 * {@link io.atoll.core.spi.StoreException} and its
 * {@link io.atoll.core.spi.StoreConflictException}.
 */
package io.atoll.core.spi;
