package io.atoll.bench.codec;

import com.esotericsoftware.kryo.Kryo;
import com.esotericsoftware.kryo.io.Input;
import com.esotericsoftware.kryo.io.Output;
import io.atoll.runtime.DefaultCodec;
import io.atoll.runtime.EntityType;
import io.atoll.runtime.codec.MessageCodec;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.Warmup;

/**
 * The measurement behind the default codec: encode then decode of a small message, through
 * Atoll's default codec (Apache Fory 1.6, compatible mode, the entity type's classes registered
 * by name-derived ids) and through Kryo 5.6 at its fastest here (classes registered, one Kryo per
 * thread, buffers reused). {@code add} is a counter increment (a string and a long); {@code order}
 * has five fields including a list. Public because JMH requires it; not API.
 */
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
@Warmup(iterations = 3, time = 1)
@Measurement(iterations = 5, time = 1)
@Fork(value = 2, jvmArgsAppend = "--add-opens=java.base/java.lang.invoke=ALL-UNNAMED")
@State(Scope.Thread)
public class CodecBenchmark {

  /** The messages of the benchmark's entity type. */
  public sealed interface Msg permits Add, Order {}

  /** A counter increment. @param entityId the counter @param delta the amount */
  public record Add(String entityId, long delta) implements Msg {}

  /** An order. @param id id @param amount amount @param qty quantity @param note note @param tags tags */
  public record Order(String id, long amount, int qty, String note, List<String> tags) implements Msg {}

  /** Which message. */
  @Param({"add", "order"})
  public String message;

  private MessageCodec fory;
  private Kryo kryo;
  private Output output;
  private Input input;
  private Object value;

  /** Builds both codecs and checks that each round-trips the message. */
  @Setup
  public void setUp() {
    fory = DefaultCodec.forType(EntityType.of("bench", Msg.class));
    kryo = new Kryo();
    kryo.register(Add.class);
    kryo.register(Order.class);
    kryo.register(ArrayList.class);
    output = new Output(256, 1 << 20);
    input = new Input();
    value = message.equals("add") ? new Add("user-4242", 7)
        : new Order("order-1001", 129_99, 3, "leave at the door", new ArrayList<>(List.of("gift", "express")));
    if (!fory.decode(fory.encode(value)).equals(value) || !kryoRoundTrip().equals(value)) {
      throw new IllegalStateException("a codec did not round-trip " + value);
    }
  }

  /** Encode and decode through Atoll's default codec (Fory). */
  @Benchmark
  public Object fory() {
    return fory.decode(fory.encode(value));
  }

  /** Encode and decode through Kryo. */
  @Benchmark
  public Object kryo() {
    return kryoRoundTrip();
  }

  private Object kryoRoundTrip() {
    output.reset();
    kryo.writeClassAndObject(output, value);
    input.setBuffer(output.getBuffer(), 0, output.position());
    return kryo.readClassAndObject(input);
  }
}
