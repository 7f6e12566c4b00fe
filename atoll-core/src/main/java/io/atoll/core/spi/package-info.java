/**
 * The service-provider interfaces that adapters implement: API, for adapter authors.
 *
 * <p>{@link io.atoll.core.spi.AssignmentStore} is where the shard managers keep their state and
 * elect their leader (one versioned blob saved under a term with compare-and-set, an ordered
 * watch, a leadership lease whose grants carry growing terms); the file, Redis and etcd stores
 * implement it and run the one store contract test. {@link
 * io.atoll.core.spi.PodHealth} is a source of truth about whether a pod is gone. Failures are
 * {@link io.atoll.core.spi.StoreException} and its
 * {@link io.atoll.core.spi.StoreConflictException} (another writer saved first) and its
 * {@link io.atoll.core.spi.StaleTermException} (another manager took the leadership).
 */
package io.atoll.core.spi;
