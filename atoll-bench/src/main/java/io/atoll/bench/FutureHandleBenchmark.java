package io.atoll.bench;

import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.TimeUnit;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.Warmup;

/**
 * What it costs per message to give callers a future they cannot complete. One message's life as
 * the caller sees it: the pod makes the future, the caller takes {@code toCompletableFuture()} and
 * attaches a continuation, the pod completes it, the continuation runs.
 *
 * <ul>
 *   <li>{@link #plainFuture}: the old shape, a {@code CompletableFuture} the caller could complete.
 *   <li>{@link #refusingSubclass}: the shape of the runtime's {@code Pending} now, a subclass whose
 *       public completers throw and which the pod completes through {@code super}.
 *   <li>{@link #minimalStage}: the alternative, {@code minimalCompletionStage()} handed out.
 * </ul>
 *
 * <p>Public because JMH requires it; not API.
 */
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
@Warmup(iterations = 3, time = 1)
@Measurement(iterations = 5, time = 1)
@Fork(1)
@State(Scope.Thread)
public class FutureHandleBenchmark {

  /** The shape of {@code Pending}: completed by its owner only. */
  static final class Refusing extends CompletableFuture<Object> {
    boolean settle(Object v) {
      return super.complete(v);
    }

    @Override
    public boolean complete(Object value) {
      throw new UnsupportedOperationException("not yours");
    }

    @Override
    public boolean completeExceptionally(Throwable ex) {
      throw new UnsupportedOperationException("not yours");
    }

    @Override
    public boolean cancel(boolean mayInterruptIfRunning) {
      throw new UnsupportedOperationException("not yours");
    }
  }

  private long seen;

  private void onDone(Object v, Throwable t) {
    seen++;
  }

  @Benchmark
  public long plainFuture() {
    CompletableFuture<Object> f = new CompletableFuture<>();
    CompletionStage<Object> caller = f;
    caller.toCompletableFuture().whenComplete(this::onDone);
    f.complete(Boolean.TRUE);
    return seen;
  }

  @Benchmark
  public long refusingSubclass() {
    Refusing f = new Refusing();
    CompletionStage<Object> caller = f;
    caller.toCompletableFuture().whenComplete(this::onDone);
    f.settle(Boolean.TRUE);
    return seen;
  }

  @Benchmark
  public long minimalStage() {
    CompletableFuture<Object> f = new CompletableFuture<>();
    CompletionStage<Object> caller = f.minimalCompletionStage();
    caller.toCompletableFuture().whenComplete(this::onDone);
    f.complete(Boolean.TRUE);
    return seen;
  }
}
