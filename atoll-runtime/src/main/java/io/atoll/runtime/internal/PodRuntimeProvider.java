package io.atoll.runtime.internal;

import io.atoll.runtime.EntityFactory;
import io.atoll.runtime.EntityType;
import io.atoll.runtime.PodProvider;
import io.atoll.runtime.PodSettings;
import io.atoll.runtime.codec.MessageCodec;
import java.util.Map;

/**
 * The pod behind {@code io.atoll.runtime.Sharding}, as its {@link PodProvider}: named in
 * atoll-runtime's {@code META-INF/services}, so the API package finds it without importing it.
 * Not API: public because {@link java.util.ServiceLoader} instantiates it.
 */
public final class PodRuntimeProvider implements PodProvider {

  /** For {@link java.util.ServiceLoader}. */
  public PodRuntimeProvider() {}

  @Override
  public PodProvider.Pod create(PodSettings settings, Map<EntityType<?>, EntityFactory<?>> hostedTypes) {
    return new PodRuntime(settings, hostedTypes);
  }

  @Override
  public MessageCodec codec(EntityType<?> type) {
    return TypeCodecs.forType(type);
  }
}
