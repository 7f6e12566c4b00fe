package io.atoll.runtime.internal;

import io.atoll.core.spi.MessageCodec;
import io.atoll.runtime.EntityType;

/** The codec of an entity type: its own, or the default record codec. */
final class Codecs {

  private Codecs() {}

  static MessageCodec forType(EntityType<?> type) {
    if (type.codec() != null) {
      return type.codec();
    }
    return RecordCodec.forType(type);
  }
}
