package io.atoll.runtime.internal;

import io.atoll.runtime.codec.MessageCodec;
import io.atoll.runtime.EntityFactory;
import io.atoll.runtime.EntityType;

/**
 * An entity type as one pod runs it: its codec, and, when this pod hosts it, its factory and its
 * index among the hosted types. Immutable.
 */
final class TypeRuntime {

  final String name;
  final EntityType<?> type;
  final MessageCodec codec;
  /** Null when this pod only sends to the type. */
  final EntityFactory<Object> factory;
  /** Index among hosted types, or -1. */
  final int index;
  final Object terminationMessage;
  final long idleNanos;

  TypeRuntime(EntityType<?> type, MessageCodec codec, EntityFactory<Object> factory, int index) {
    this.name = type.name();
    this.type = type;
    this.codec = codec;
    this.factory = factory;
    this.index = index;
    this.terminationMessage = type.terminationMessage();
    this.idleNanos = type.idleTime().toNanos();
  }

  boolean hosted() {
    return factory != null;
  }
}
