package io.atoll.testkit.history;

/**
 * A sequential, deterministic specification: what an operation does to a state and answers. States
 * must be immutable values with {@code equals} and {@code hashCode} (the checker caches them).
 *
 * @param <S> the state
 * @param <I> an operation's input
 * @param <O> an operation's output
 */
public interface Model<S, I, O> {

  /** The state before any operation. */
  S initial();

  /** What {@code input} does in {@code state}: the state after it, and its answer. */
  Step<S, O> apply(S state, I input);

  /** A state after an operation, and the operation's answer (null allowed for both). */
  record Step<S, O>(S state, O output) {}
}
