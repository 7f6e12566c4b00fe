package io.atoll.runtime;

import io.atoll.core.ClusterConfig;
import io.atoll.core.PodId;
import io.atoll.runtime.codec.MessageCodec;
import java.util.List;
import java.util.Map;

/**
 * Not API: the one door between this package and the pod that implements it (under {@code
 * io.atoll.runtime.internal}). The implementation is found with {@link java.util.ServiceLoader}
 * (atoll-runtime's {@code META-INF/services}), as grpc-java finds its channel providers, so that
 * imports run one way: the internals use this package, and this package names none of them. May
 * change in any release.
 */
public interface PodProvider {

  /** A pod with {@code settings} that hosts {@code hostedTypes} (none for a client); not started. */
  Pod create(PodSettings settings, Map<EntityType<?>, EntityFactory<?>> hostedTypes);

  /** The codec a pod uses for {@code type}: the type's own, or the default (see {@link DefaultCodec}). */
  MessageCodec codec(EntityType<?> type);

  /** Not API: a pod as {@link Sharding}, its public face, drives it. Thread-safe. */
  interface Pod {

    /** Starts the pod: learns the cluster, listens, registers, and begins renewing its lease. */
    void start(Sharding facade);

    /** A handle to {@code type/id} sending from this pod. */
    <M> EntityRef<M> entity(EntityType<M> type, String id);

    /** This pod's identity; null before it started. */
    PodId self();

    /** The current view of the cluster config. */
    ClusterConfig view();

    /** Shards this pod serves now. */
    List<Integer> servedShards();

    /** Live activations on this pod. */
    int activeEntities();

    /** Messages of this pod in flight. */
    int inFlight();

    /** Messages of this pod waiting in shard buffers. */
    int bufferedMessages();

    /** The number of shards of the cluster. */
    int numberOfShards();

    /** Whether the pod holds a live lease (always true for a client). */
    boolean holdsLease();

    /** Graceful stop; idempotent. */
    void close();
  }
}
