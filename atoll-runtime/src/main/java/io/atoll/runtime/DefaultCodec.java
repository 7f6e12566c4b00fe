package io.atoll.runtime;

import io.atoll.runtime.codec.MessageCodec;

/**
 * The codec a pod uses for an entity type: the type's own ({@code EntityType.withCodec}) or the
 * default, Apache Fory limited to the type's declared classes (see {@link EntityType}). For
 * tools and tests that need the bytes a pod would send. Thread-safe.
 */
public final class DefaultCodec {

  private DefaultCodec() {}

  /** The codec of {@code type}; building one takes milliseconds (serializers are generated), so keep it. */
  public static MessageCodec forType(EntityType<?> type) {
    return PodProviders.get().codec(type);
  }
}
