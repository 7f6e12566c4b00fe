package io.atoll.runtime;

import io.atoll.core.EntityAddress;
import io.atoll.core.ShardHasher;
import io.atoll.core.Space;
import io.atoll.runtime.codec.MessageCodec;
import java.time.Duration;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Objects;
import java.util.Set;

/**
 * A kind of entity: a name unique in the cluster and the type of its messages, with how its
 * activations end. Immutable; derive variants with the {@code with...} methods.
 *
 * <pre>{@code
 * static final EntityType<CounterMsg> COUNTER = EntityType.of("counter", CounterMsg.class)
 *     .withIdleTime(Duration.ofMinutes(5));
 * }</pre>
 *
 * <p>Messages travel between pods through the type's codec. The default codec handles records,
 * enums and common JDK types: it accepts the message type itself, every permitted subtype of a
 * sealed message type (recursively), the answer types named in {@code Reply<X>} record
 * components, and the types added with {@link #withTypes}; it refuses anything else, so bytes from
 * the network can only ever become those types.
 *
 * @param <M> the type of the messages its entities handle
 */
public final class EntityType<M> {

  /** The default idle time after which an entity is passivated: one minute. */
  public static final Duration DEFAULT_IDLE_TIME = Duration.ofMinutes(1);

  private final String name;
  private final Class<M> messageClass;
  private final M terminationMessage;
  private final Duration idleTime;
  private final Set<Class<?>> extraTypes;
  private final MessageCodec codec;
  private final String role;
  private final ShardHasher hasher;
  /** How its entities' handlers are run: see {@link #withNonBlockingHandlers}, {@link #withInlineLocalSends}. */
  private final Run run;

  private enum Run { OWN_THREAD, SHARED_DRAINS, INLINE_LOCAL_SENDS }

  private EntityType(String name, Class<M> messageClass, M terminationMessage, Duration idleTime,
      Set<Class<?>> extraTypes, MessageCodec codec) {
    this(name, messageClass, terminationMessage, idleTime, extraTypes, codec, Space.DEFAULT_ROLE, null, Run.OWN_THREAD);
  }

  private EntityType(String name, Class<M> messageClass, M terminationMessage, Duration idleTime,
      Set<Class<?>> extraTypes, MessageCodec codec, String role, ShardHasher hasher, Run run) {
    this.role = role;
    this.run = run;
    this.hasher = hasher;
    this.name = name;
    this.messageClass = messageClass;
    this.terminationMessage = terminationMessage;
    this.idleTime = idleTime;
    this.extraTypes = extraTypes;
    this.codec = codec;
  }

  /**
   * A type with a name and a message class, the default codec, no termination message and the
   * default idle time.
   *
   * @throws IllegalArgumentException if the name is not 1..255 of {@code [A-Za-z0-9._:$-]} (a
   *     Java class name fits): it appears in the manager's log and in {@code atoll status}, which
   *     print it as it is
   */
  public static <M> EntityType<M> of(String name, Class<M> messageClass) {
    Objects.requireNonNull(name, "name");
    Objects.requireNonNull(messageClass, "messageClass");
    EntityAddress.checkTypeName(name);
    return new EntityType<>(name, messageClass, null, DEFAULT_IDLE_TIME, Set.of(), null);
  }

  /**
   * With a message that each activation receives, as its last, before it ends (hand-off, idle
   * passivation, graceful stop), e.g. to flush state. Without one, activations just end.
   */
  public EntityType<M> withTerminationMessage(M message) {
    Objects.requireNonNull(message, "message");
    return new EntityType<>(name, messageClass, message, idleTime, extraTypes, codec, role, hasher, run);
  }

  /**
   * With the idle time after which an activation is passivated (ended, to be started again by
   * its next message); {@link Duration#ZERO} keeps activations until their shard moves.
   */
  public EntityType<M> withIdleTime(Duration idle) {
    Objects.requireNonNull(idle, "idle");
    if (idle.isNegative()) {
      throw new IllegalArgumentException("idle time: " + idle + " (expected: >= 0)");
    }
    return new EntityType<>(name, messageClass, terminationMessage, idle, extraTypes, codec, role, hasher, run);
  }

  /** With more types the default codec may carry (e.g. answer types it cannot find by itself). */
  public EntityType<M> withTypes(Class<?>... types) {
    Set<Class<?>> all = new LinkedHashSet<>(extraTypes);
    all.addAll(List.of(types));
    return new EntityType<>(name, messageClass, terminationMessage, idleTime, Set.copyOf(all), codec, role, hasher, run);
  }

  /** With a codec of its own for messages and answers, e.g. {@code ProtobufCodec}. */
  public EntityType<M> withCodec(MessageCodec c) {
    return new EntityType<>(name, messageClass, terminationMessage, idleTime, extraTypes, Objects.requireNonNull(c), role, hasher,
        run);
  }

  /**
   * On the pods of {@code role}: the type's entities live in that role's shard space, which the
   * manager places only on pods hosting the role (a pod hosts the roles it names with
   * {@code Sharding.Builder.role} and those of the types it registers). Every pod that sends to or
   * hosts the type must declare it with the same role. Without this the type is on the default
   * role ({@code ""}), as every type of a cluster without roles.
   *
   * @throws IllegalArgumentException if the role is not 1..64 of {@code [A-Za-z0-9._-]} or empty
   */
  public EntityType<M> onRole(String role) {
    return new EntityType<>(name, messageClass, terminationMessage, idleTime, extraTypes, codec, Space.checkRole(role), hasher,
        run);
  }

  /**
   * With a hasher of its own: the type's entities go to {@code h.shardOf(id, count)} of its
   * role's space (count: the space's shards) instead of the pod's hasher
   * ({@code Sharding.Builder.hasher}, {@link ShardHasher#DEFAULT} unless set). Types of one role
   * may hash differently; they still share the space's shards. Every pod that sends to or hosts
   * the type must give it the same hasher (of the same class): the receiving pod checks each
   * message's shard with its own and refuses a mismatch as {@code BAD_REQUEST}, and the shard
   * manager refuses to admit a pod whose hasher for the type places ids otherwise than the live
   * pods hosting it (its start fails naming both): a new hasher starts once the old pods are gone.
   */
  public EntityType<M> withHasher(ShardHasher h) {
    return new EntityType<>(name, messageClass, terminationMessage, idleTime, extraTypes, codec, role,
        Objects.requireNonNull(h, "hasher"), run);
  }

  /**
   * With handlers that never block: the type's entities are run by a few drains the pod shares
   * between such entities, each taking the entities that have messages in turn, instead of by a
   * virtual thread of their own. On a busy pod that saves a thread start per message to an idle
   * entity, which is most of what such a message costs its sender (docs/benchmarks.md): the same
   * contract as an actor on a shared dispatcher. A message to a quiet pod still starts a drain.
   *
   * <p>Only for handlers that never wait: no blocking I/O, no {@code sleep}, no lock held by
   * others for long, no waiting for an answer of another entity ({@code ask(...).join()}). A
   * handler that blocks anyway holds its drain, and the entities queued behind it wait until the
   * pod's watchdog, which looks every 5 ms, sees the drains make no progress and starts another:
   * some milliseconds per blocked handler, where an entity with its own thread makes no other wait
   * at all. What a type promises otherwise is unchanged: an entity's messages are handled one at a
   * time and in order, never by two activations at once, and each is acknowledged or fails with a
   * reason. The thread is not the entity's own: a thread-local a handler sets may be seen by the
   * next entity's handler on that drain. A pod decides this for the entities it hosts; senders
   * need not agree.
   */
  public EntityType<M> withNonBlockingHandlers() {
    return new EntityType<>(name, messageClass, terminationMessage, idleTime, extraTypes, codec, role, hasher,
        Run.SHARED_DRAINS);
  }

  /**
   * With handlers that never block, run as {@link #withNonBlockingHandlers} runs them, and one
   * step further: a send on this pod to an idle entity of the type that is already active is
   * handled on the sending thread, before {@code tell} or {@code ask} returns, with no hand-off to
   * another thread at all (docs/benchmarks.md). The sender gets the same stage as ever: a tell's is
   * complete when it is returned, and an ask's as soon as the handler answers. What the entity
   * promises is unchanged: one message at a time, in order, the lease checked before each handler,
   * never two activations at once.
   *
   * <p>What the sending thread takes on, which a type should declare only if its senders can:
   * <ul>
   *   <li>it runs that one handler; what reached the entity meanwhile (other senders' messages,
   *       other pods') goes to the pod's drains. A handler that blocks anyway blocks the sender,
   *       and no watchdog starts another thread for it;
   *   <li>the handler sees the sender's thread: its thread-locals (logging context, a
   *       transaction), its locks held (a handler taking one the sender holds enters it);
   *   <li>a continuation added to a stage that is already complete runs at once on the sending
   *       thread: a chain that sends the next message from the last one's continuation recurses on
   *       one stack (use the {@code ...Async} forms, or a loop);
   *   <li>an interrupt of the sender is hidden from the handler and kept; one that comes while
   *       the handler runs (from the handler or elsewhere) stays with the sender;
   *   <li>an {@link Error} outside the handler (whose failures fail the message, as always), e.g.
   *       a stack overflow on a deep stack, reaches the sender; the entity's drain passes to the
   *       pod's drains first.
   * </ul>
   * Never run on the sending thread: the first message of an activation (the factory and the
   * activation start on a drain), a message for an entity that is busy or waits for a fenced
   * predecessor, messages from other pods, sends from a handler (of any type), and sends from the
   * pod's own calls into the caller's code (a continuation run as the pod completes a message, an
   * observer's callback): those go to the drains as {@link #withNonBlockingHandlers} describes. A
   * pod decides this for the entities it hosts; senders need not agree.
   */
  public EntityType<M> withInlineLocalSends() {
    return new EntityType<>(name, messageClass, terminationMessage, idleTime, extraTypes, codec, role, hasher,
        Run.INLINE_LOCAL_SENDS);
  }

  /**
   * Whether its handlers never block: {@link #withNonBlockingHandlers} or
   * {@link #withInlineLocalSends}.
   */
  public boolean nonBlockingHandlers() {
    return run != Run.OWN_THREAD;
  }

  /** Whether a local send may be handled on the sending thread ({@link #withInlineLocalSends}). */
  public boolean inlineLocalSends() {
    return run == Run.INLINE_LOCAL_SENDS;
  }

  /** The hasher set with {@link #withHasher}, or null for the pod's. */
  public ShardHasher hasher() {
    return hasher;
  }

  /** The role whose shard space holds this type's entities; {@code ""} for the default role. */
  public String role() {
    return role;
  }

  /** The type's name, unique in the cluster. */
  public String name() {
    return name;
  }

  /** The type of its messages. */
  public Class<M> messageClass() {
    return messageClass;
  }

  /** The termination message, or null. */
  public M terminationMessage() {
    return terminationMessage;
  }

  /** The idle time; zero means never. */
  public Duration idleTime() {
    return idleTime;
  }

  /** Types added for the default codec. */
  public Set<Class<?>> extraTypes() {
    return extraTypes;
  }

  /** The codec set with {@link #withCodec}, or null for the default. */
  public MessageCodec codec() {
    return codec;
  }

  @Override
  public boolean equals(Object o) {
    return o instanceof EntityType<?> t && t.name.equals(name) && t.messageClass.equals(messageClass);
  }

  @Override
  public int hashCode() {
    return name.hashCode();
  }

  @Override
  public String toString() {
    return "EntityType[" + name + ", " + messageClass.getName() + (role.isEmpty() ? "" : ", role " + role) + "]";
  }
}
