package io.atoll.runtime.internal;

import io.atoll.runtime.codec.MessageCodec;
import io.atoll.runtime.EntityType;

/** The codec of an entity type: its own, or the default record codec. Not API. */
public final class Codecs {

  private Codecs() {}

  /** The codec a pod uses for {@code type}. */
  public static MessageCodec forType(EntityType<?> type) {
    if (type.codec() != null) {
      return type.codec();
    }
    return RecordCodec.forType(type);
  }
}
