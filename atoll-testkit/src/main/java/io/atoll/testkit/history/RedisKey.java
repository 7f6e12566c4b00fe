package io.atoll.testkit.history;

import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Objects;
import java.util.Set;

/**
 * The model of one Redis key under {@code SET}, {@code GET} and {@code INCR}, as a client sees them:
 * SET answers {@code OK}, GET the value or null (nil), INCR the new value in decimal (an absent key
 * counts as 0); INCR on a value that is not a 64-bit integer, or that would overflow, answers an
 * error ({@code "ERR"}) and changes nothing.
 */
public final class RedisKey implements Model<RedisKey.Value, RedisKey.Command, String> {

  /** The key's value: null while the key does not exist. */
  public record Value(String value) {}

  /** What a command does. */
  public enum Kind { SET, GET, INCR }

  /** A command: SET carries its value, GET and INCR none. */
  public record Command(Kind kind, String value) {
    public Command {
      java.util.Objects.requireNonNull(kind, "kind");
      if ((kind == Kind.SET) != (value != null)) {
        throw new IllegalArgumentException(kind + " with value " + value + " (expected: a value for SET only)");
      }
    }

    public static Command set(String value) {
      return new Command(Kind.SET, Objects.requireNonNull(value));
    }

    public static Command get() {
      return new Command(Kind.GET, null);
    }

    public static Command incr() {
      return new Command(Kind.INCR, null);
    }

    @Override
    public String toString() {
      return kind == Kind.SET ? "SET " + value : kind.name();
    }
  }

  @Override
  public Value initial() {
    return new Value(null);
  }

  @Override
  public Step<Value, String> apply(Value state, Command c) {
    return switch (c.kind()) {
      case SET -> new Step<>(new Value(c.value()), "OK");
      case GET -> new Step<>(state, state.value());
      case INCR -> {
        long n;
        try {
          n = state.value() == null ? 0 : redisInteger(state.value());
        } catch (NumberFormatException e) {
          yield new Step<>(state, "ERR");
        }
        if (n == Long.MAX_VALUE) {
          yield new Step<>(state, "ERR");
        }
        String next = Long.toString(n + 1);
        yield new Step<>(new Value(next), next);
      }
    };
  }

  /**
   * The 64-bit integer Redis reads in a string (its {@code string2ll}): ASCII digits, an optional
   * minus, no plus sign, no leading zero (but "0"), no "-0".
   *
   * @throws NumberFormatException otherwise, or on overflow
   */
  static long redisInteger(String s) {
    if (!s.matches("-?[1-9][0-9]*|0")) {
      throw new NumberFormatException(s);
    }
    return Long.parseLong(s);
  }

  /**
   * {@code history} without the operations that cannot change the verdict, which makes the search
   * much smaller: a pending GET (no answer says nothing) and, on a key without INCR whose SET values
   * are all distinct, a pending SET whose value no answer shows (dropping it only removes a write
   * nobody read; any linearization with it stays one without it).
   */
  public static List<Operation<Command, String>> prune(List<Operation<Command, String>> history) {
    boolean incr = false;
    Set<String> values = new HashSet<>();
    boolean distinct = true;
    Set<String> seen = new HashSet<>();
    for (Operation<Command, String> op : history) {
      incr |= op.input().kind() == Kind.INCR;
      if (op.input().kind() == Kind.SET) {
        distinct &= values.add(op.input().value());
      }
      if (!op.pending() && op.output() != null) {
        seen.add(op.output());
      }
    }
    boolean dropSets = !incr && distinct;
    List<Operation<Command, String>> kept = new ArrayList<>(history.size());
    for (Operation<Command, String> op : history) {
      if (op.pending() && (op.input().kind() == Kind.GET
          || dropSets && op.input().kind() == Kind.SET && !seen.contains(op.input().value()))) {
        continue;
      }
      kept.add(op);
    }
    return kept;
  }
}
