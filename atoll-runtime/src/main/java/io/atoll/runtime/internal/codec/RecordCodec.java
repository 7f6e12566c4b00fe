package io.atoll.runtime.internal.codec;

import io.atoll.runtime.codec.MessageCodec;
import io.atoll.runtime.EntityType;
import io.atoll.runtime.Reply;
import java.lang.reflect.Modifier;
import java.lang.reflect.ParameterizedType;
import java.lang.reflect.RecordComponent;
import java.lang.reflect.Type;
import java.lang.reflect.WildcardType;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.zip.CRC32;
import org.apache.fory.Fory;
import org.apache.fory.ThreadSafeFory;
import org.apache.fory.config.Config;
import org.apache.fory.context.ReadContext;
import org.apache.fory.context.WriteContext;
import org.apache.fory.serializer.Serializer;
import org.apache.fory.serializer.Shareable;

/**
 * The default codec: Apache Fory in its Java-native, schema-compatible mode, limited to the types
 * an entity type declares.
 *
 * <p><b>Why Fory.</b> Measured here against Kryo 5.6.2 on small records (docs/benchmarks.md):
 * 1.5 to 3 times faster to encode and decode, and under fuzzed input it never allocated more than a
 * few megabytes, while Kryo allocated up to 231 MB from a 12-byte input (an unchecked string
 * length). Fory requires class registration, bounds depth and graph memory, and in compatible mode
 * tolerates fields added or removed between versions, which a rolling update needs.
 *
 * <p><b>Which types.</b> The message class; every permitted subtype of a sealed type, recursively;
 * the component types of records, recursively, including {@code X} of {@code Reply<X>} (the answer
 * type); and the types the entity type lists with {@code withTypes}. JDK types are Fory's own.
 * Each gets an id derived from its class name (not from the order of registration), so pods whose
 * sets of types differ, as during a rolling update, still agree on the ids of the types they share.
 *
 * <p><b>Reply handles</b> inside messages are written as one byte: a handle of a sender's ask
 * becomes, on the receiving pod, the handle that answers that ask on its stream
 * ({@link ReplyBinding}); any other handle becomes one that answers nobody. Thread-safe.
 */
public final class RecordCodec implements MessageCodec {

  private static final int REPLY_SENDER = 1;
  private static final int REPLY_FORWARDED = 2;
  private static final int REPLY_NONE = 3;
  private static final int FIRST_TYPE_ID = 1000;

  private final ThreadSafeFory fory;
  private final String typeName;
  private final Set<Class<?>> types;

  private RecordCodec(String typeName, ThreadSafeFory fory, Set<Class<?>> types) {
    this.typeName = typeName;
    this.fory = fory;
    this.types = types;
  }

  /**
   * The codec of {@code type}. The pod's two reply handle classes are passed in rather than named
   * here, so that this package stays below the rooms that define them.
   *
   * @param askHandle the class of a sender's ask handle, which the receiving pod rebinds to the
   *     handle that answers on the stream the message came by
   * @param forwardedHandle the class of a received handle passed on in another message, which
   *     answers nobody on the pod it reaches
   */
  public static MessageCodec forType(EntityType<?> type, Class<? extends Reply<?>> askHandle,
      Class<? extends Reply<?>> forwardedHandle) {
    Set<Class<?>> found = new LinkedHashSet<>();
    collect(type.messageClass(), found);
    for (Class<?> c : type.extraTypes()) {
      collect(c, found);
    }
    List<Class<?>> sorted = new ArrayList<>(found);
    sorted.sort(Comparator.comparing(Class::getName));
    ThreadSafeFory f = Fory.builder()
        .withXlang(false)
        .requireClassRegistration(true)
        .withDeserializeUnknownClass(false)
        .withCompatible(true)
        .withRefTracking(false)
        .withMaxDepth(32)
        .withMaxGraphMemoryBytes(16L << 20)
        .buildThreadSafeFory();
    f.register(askHandle, REPLY_SENDER);
    f.registerSerializer(askHandle, r -> new ReplySerializer(r.getConfig(), askHandle, askHandle));
    f.register(forwardedHandle, REPLY_FORWARDED);
    f.registerSerializer(forwardedHandle, r -> new ReplySerializer(r.getConfig(), forwardedHandle, askHandle));
    f.register(NoReply.class, REPLY_NONE);
    f.registerSerializer(NoReply.class, r -> new ReplySerializer(r.getConfig(), NoReply.class, askHandle));
    Map<Integer, Class<?>> ids = new HashMap<>();
    for (Class<?> c : sorted) {
      int id = idOf(c.getName());
      while (ids.containsKey(id)) {
        id = FIRST_TYPE_ID + ((id - FIRST_TYPE_ID + 1) & 0x0FFFFFFF); // a rare collision: the next free id
      }
      ids.put(id, c);
      f.register(c, id);
    }
    f.ensureSerializersCompiled();
    return new RecordCodec(type.name(), f, Set.copyOf(sorted));
  }

  static int idOf(String className) {
    CRC32 crc = new CRC32();
    crc.update(className.getBytes(StandardCharsets.UTF_8));
    return FIRST_TYPE_ID + (int) (crc.getValue() & 0x0FFFFFFF);
  }

  private static void collect(Class<?> c, Set<Class<?>> out) {
    if (c == null || c.isPrimitive() || out.contains(c) || c.getName().startsWith("java.")
        || Reply.class.isAssignableFrom(c)) {
      return;
    }
    if (c.isArray()) {
      collect(c.getComponentType(), out);
      return;
    }
    if (c.isSealed()) {
      for (Class<?> p : c.getPermittedSubclasses()) {
        collect(p, out);
      }
    }
    if (c.isInterface() || (Modifier.isAbstract(c.getModifiers()) && !c.isEnum())) {
      return; // only concrete classes are registered; their supertypes need no id
    }
    out.add(c);
    if (c.isRecord()) {
      for (RecordComponent rc : c.getRecordComponents()) {
        collectType(rc.getGenericType(), out);
      }
    }
  }

  private static void collectType(Type t, Set<Class<?>> out) {
    if (t instanceof Class<?> c) {
      collect(c, out);
    } else if (t instanceof ParameterizedType pt) {
      if (pt.getRawType() instanceof Class<?> raw && !Reply.class.isAssignableFrom(raw)) {
        collect(raw, out);
      }
      for (Type a : pt.getActualTypeArguments()) {
        collectType(a, out);
      }
    } else if (t instanceof WildcardType w) {
      for (Type b : w.getUpperBounds()) {
        collectType(b, out);
      }
    }
  }

  @Override
  public byte[] encode(Object value) {
    if (value == null) {
      throw new IllegalArgumentException("codec of '" + typeName + "': null (expected: a message or an answer)");
    }
    Class<?> c = value.getClass();
    if (!types.contains(c) && !c.getName().startsWith("java.")) {
      throw new IllegalArgumentException("codec of '" + typeName + "': " + c.getName() + " is not one of its types "
          + "(expected: the message type, its sealed subtypes, record components and Reply<X> answer types, or a"
          + " type added with EntityType.withTypes)");
    }
    try {
      return fory.serialize(value);
    } catch (RuntimeException e) {
      throw new IllegalArgumentException("codec of '" + typeName + "': cannot encode " + c.getName() + ": " + e, e);
    }
  }

  @Override
  public Object decode(byte[] bytes) {
    Object o;
    try {
      o = fory.deserialize(bytes);
    } catch (RuntimeException | StackOverflowError e) {
      throw new IllegalArgumentException("codec of '" + typeName + "': not a valid encoding (" + bytes.length
          + " bytes): " + e, e);
    }
    if (o == null) {
      throw new IllegalArgumentException("codec of '" + typeName + "': the bytes encode null");
    }
    return o;
  }

  /** Writes a reply handle as one byte, and reads it back as the receiving pod's handle. */
  private static final class ReplySerializer extends Serializer<Object> implements Shareable {
    private static final byte BIND = 1;
    private static final byte NOBODY = 0;

    private final Class<?> askHandle;

    @SuppressWarnings({"unchecked", "rawtypes"})
    ReplySerializer(Config config, Class<?> cls, Class<?> askHandle) {
      super(config, (Class) cls);
      this.askHandle = askHandle;
    }

    @Override
    public void write(WriteContext ctx, Object value) {
      ctx.writeByte(value.getClass() == askHandle ? BIND : NOBODY);
    }

    @Override
    public Object read(ReadContext ctx) {
      return ctx.getBuffer().readByte() == BIND ? ReplyBinding.current() : NoReply.INSTANCE;
    }
  }
}
