package io.atoll.runtime.internal.host;

import io.atoll.core.ShardHasher;
import io.atoll.runtime.codec.MessageCodec;
import io.atoll.runtime.EntityFactory;
import io.atoll.runtime.EntityType;

/**
 * An entity type as one pod runs it: its codec, and, when this pod hosts it, its factory and its
 * index among the hosted types. Immutable.
 */
public final class TypeRuntime {

  /** The type's name. */
  public final String name;
  /** The type. */
  public final EntityType<?> type;
  /** The role whose shard space holds its entities ({@code ""} for the default role). */
  public final String role;
  /** Its own hasher ({@link EntityType#withHasher}), or null for the pod's. */
  public final ShardHasher hasher;
  /** Its codec, for messages and answers. */
  public final MessageCodec codec;
  /** Null when this pod only sends to the type. */
  final EntityFactory<Object> factory;
  /** Index among hosted types, or -1. */
  final int index;
  final Object terminationMessage;
  final long idleNanos;
  /** Its entities run on the pod's shared drains ({@link EntityType#withNonBlockingHandlers}). */
  final boolean sharedDrains;
  /** A local send may handle a message on the sending thread ({@link EntityType#withInlineLocalSends}). */
  final boolean inlineLocalSends;

  /**
   * A type this pod hosts ({@code factory} not null, {@code index} its place among the hosted
   * types) or only sends to ({@code factory} null, {@code index} -1).
   */
  public TypeRuntime(EntityType<?> type, MessageCodec codec, EntityFactory<Object> factory, int index) {
    this.name = type.name();
    this.type = type;
    this.role = type.role();
    this.hasher = type.hasher();
    this.codec = codec;
    this.factory = factory;
    this.index = index;
    this.terminationMessage = type.terminationMessage();
    this.idleNanos = type.idleTime().toNanos();
    this.sharedDrains = type.nonBlockingHandlers();
    this.inlineLocalSends = type.inlineLocalSends();
  }

  /** The hasher of its entities: its own, else {@code podHasher}. */
  public ShardHasher hasher(ShardHasher podHasher) {
    return hasher != null ? hasher : podHasher;
  }

  /** Whether this pod hosts the type. */
  public boolean hosted() {
    return factory != null;
  }
}
