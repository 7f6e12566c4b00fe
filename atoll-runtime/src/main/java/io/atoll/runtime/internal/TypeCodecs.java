package io.atoll.runtime.internal;

import io.atoll.runtime.EntityType;
import io.atoll.runtime.codec.MessageCodec;
import io.atoll.runtime.internal.codec.RecordCodec;
import io.atoll.runtime.internal.host.InboundDelivery;
import io.atoll.runtime.internal.send.Pending;

/**
 * The codec of an entity type: its own, or the default record codec, which is told the pod's reply
 * handle classes here, where every room is known. Package-private.
 */
final class TypeCodecs {

  private TypeCodecs() {}

  /** The codec a pod uses for {@code type}. */
  static MessageCodec forType(EntityType<?> type) {
    if (type.codec() != null) {
      return type.codec();
    }
    return RecordCodec.forType(type, Pending.class, InboundDelivery.class);
  }
}
