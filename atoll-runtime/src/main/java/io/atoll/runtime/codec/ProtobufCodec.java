package io.atoll.runtime.codec;

import com.google.protobuf.Any;
import com.google.protobuf.InvalidProtocolBufferException;
import com.google.protobuf.Message;
import com.google.protobuf.Parser;
import java.util.HashMap;
import java.util.Map;

/**
 * A codec for entity types whose messages and answers are protobuf messages. Each value travels
 * as a {@code google.protobuf.Any}, so it decodes to its own type; only the types given here
 * decode, anything else is refused. Asks use {@code EntityRef.ask(message)} and answer through
 * {@code EntityContext.reply()}, since a protobuf message cannot hold a reply handle. Immutable
 * and thread-safe.
 *
 * <pre>{@code
 * EntityType<Command> ACCOUNT = EntityType.of("account", Command.class)
 *     .withCodec(ProtobufCodec.of(Command.getDefaultInstance(), Balance.getDefaultInstance()));
 * }</pre>
 */
public final class ProtobufCodec implements MessageCodec {

  private final Map<String, Parser<? extends Message>> parsers;

  private ProtobufCodec(Map<String, Parser<? extends Message>> parsers) {
    this.parsers = parsers;
  }

  /** A codec for the types of these default instances (messages and answers). */
  public static ProtobufCodec of(Message... defaultInstances) {
    Map<String, Parser<? extends Message>> p = new HashMap<>();
    for (Message m : defaultInstances) {
      p.put(m.getDescriptorForType().getFullName(), m.getParserForType());
    }
    return new ProtobufCodec(Map.copyOf(p));
  }

  @Override
  public byte[] encode(Object value) {
    if (!(value instanceof Message m)) {
      throw new IllegalArgumentException("protobuf codec: " + (value == null ? "null" : value.getClass().getName())
          + " is not a protobuf message (expected: one of " + parsers.keySet() + ")");
    }
    if (!parsers.containsKey(m.getDescriptorForType().getFullName())) {
      throw new IllegalArgumentException("protobuf codec: " + m.getDescriptorForType().getFullName()
          + " is not registered (expected: one of " + parsers.keySet() + ")");
    }
    return Any.pack(m).toByteArray();
  }

  @Override
  public Object decode(byte[] bytes) {
    try {
      Any any = Any.parseFrom(bytes);
      String url = any.getTypeUrl();
      String name = url.substring(url.lastIndexOf('/') + 1);
      Parser<? extends Message> parser = parsers.get(name);
      if (parser == null) {
        throw new IllegalArgumentException("protobuf codec: type '" + name + "' is not registered (expected: one of "
            + parsers.keySet() + ")");
      }
      return parser.parseFrom(any.getValue());
    } catch (InvalidProtocolBufferException e) {
      throw new IllegalArgumentException("protobuf codec: not a valid encoding: " + e.getMessage(), e);
    }
  }
}
