package io.atoll.testkit.history;

import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.BitSet;
import java.util.Comparator;
import java.util.HashSet;
import java.util.List;
import java.util.Objects;
import java.util.Set;

/**
 * Whether a recorded history of one object is linearizable with respect to a {@link Model}: whether
 * each operation can be given one instant between its invocation and its answer such that, taken
 * in the order of those instants, the model gives every answer that was observed. An operation
 * without an answer ({@link Operation#pending()}) may take effect at any instant after its
 * invocation, or never.
 *
 * <p>The search is Wing and Gong's (1993): walk the invocations and answers in time order; at an
 * invocation, try to linearize the operation now (the model must allow it and give its answer),
 * and at an answer whose operation is not linearized yet, undo the last choice. With Lowe's (2017)
 * cache of visited configurations (the set of linearized operations with the state they led to),
 * no configuration is explored twice. Pending operations with equal inputs are interchangeable
 * (none has a deadline), so only the earliest one still open is tried: k of them cost k choices, not
 * 2^k subsets. A pending operation that would not change the state is never taken: whatever can
 * follow it can follow without it.
 *
 * <p>Known limit: pending writes of distinct values that change the state (e.g. SETs on a key that
 * also takes INCR, where {@link RedisKey#prune} cannot drop them) double the configurations each,
 * and the cache holds a set of operations per configuration: such histories can exhaust the step
 * budget ({@link Undecided}) or the heap.
 *
 * <p>Linearizability is local (Herlihy and Wing): a history of many keys is linearizable if the
 * history of each key is, so a caller checks each key's operations on their own.
 */
public final class Linearizability {

  private Linearizability() {}

  /** The outcome of a check. */
  public sealed interface Verdict<I, O> {
    /** Whether the history is linearizable. */
    default boolean ok() {
      return this instanceof Linearizable;
    }
  }

  /**
   * Linearizable.
   *
   * @param order the operations in an order that explains every answer (pending operations left out
   *     took no effect)
   */
  public record Linearizable<I, O>(List<Operation<I, O>> order) implements Verdict<I, O> {}

  /**
   * Not linearizable.
   *
   * @param stuck the operation whose answer the longest prefix could not get past: no order of
   *     the others before that answer explains it
   * @param longest the longest prefix the search linearized, in order: where it got furthest
   */
  public record Violation<I, O>(Operation<I, O> stuck, List<Operation<I, O>> longest) implements Verdict<I, O> {}

  /**
   * Undecided: the search took more than its budget of steps (a history with very many concurrent
   * operations).
   */
  public record Undecided<I, O>(long steps) implements Verdict<I, O> {}

  /** One invocation or answer in the time-ordered list. */
  private static final class Entry<I, O> {
    final int id;
    final Operation<I, O> op;
    final boolean call;
    Entry<I, O> match; // a call's answer (null if pending)
    Entry<I, O> sameBefore; // a pending call's closest earlier pending call with an equal input
    Entry<I, O> prev;
    Entry<I, O> next;

    Entry(int id, Operation<I, O> op, boolean call) {
      this.id = id;
      this.op = op;
      this.call = call;
    }
  }

  private record Visited<S>(BitSet linearized, S state) {}

  private record Frame<S, I, O>(Entry<I, O> call, S state, BitSet linearized) {}

  /** Checks with a budget of 10 million steps. */
  public static <S, I, O> Verdict<I, O> check(Model<S, I, O> model, List<Operation<I, O>> history) {
    return check(model, history, 10_000_000L);
  }

  /**
   * Checks {@code history} against {@code model}, giving up ({@link Undecided}) after {@code
   * maxSteps} steps of the search.
   */
  public static <S, I, O> Verdict<I, O> check(Model<S, I, O> model, List<Operation<I, O>> history, long maxSteps) {
    Entry<I, O> head = list(history);
    int open = 0; // answered operations not linearized yet
    for (Entry<I, O> e = head.next; e != null; e = e.next) {
      if (!e.call) {
        open++;
      }
    }
    S state = model.initial();
    BitSet linearized = new BitSet(history.size());
    Set<Visited<S>> cache = new HashSet<>();
    ArrayDeque<Frame<S, I, O>> stack = new ArrayDeque<>();
    List<Operation<I, O>> longest = List.of();
    Operation<I, O> stuck = null;
    Entry<I, O> entry = head.next;
    long steps = 0;
    while (open > 0) {
      if (++steps > maxSteps) {
        return new Undecided<>(steps);
      }
      if (entry != null && entry.call) {
        if (entry.match == null && entry.sameBefore != null && !linearized.get(entry.sameBefore.id)) {
          // Interchangeable with an earlier pending call still open, which goes wherever this one can.
          entry = entry.next;
          continue;
        }
        Model.Step<S, O> step = model.apply(state, entry.op.input());
        // A pending operation that changes nothing is never worth taking: whatever follows it
        // follows without it too.
        if (entry.match == null ? !Objects.equals(step.state(), state)
            : Objects.equals(step.output(), entry.op.output())) {
          BitSet next = (BitSet) linearized.clone();
          next.set(entry.id);
          if (cache.add(new Visited<>(next, step.state()))) {
            stack.push(new Frame<>(entry, state, linearized));
            state = step.state();
            linearized = next;
            lift(entry);
            if (entry.match != null) {
              open--;
            }
            entry = head.next;
            continue;
          }
        }
        entry = entry.next;
        continue;
      }
      // An answer whose operation is not linearized yet (or the end): undo the last choice.
      if (stuck == null || stack.size() > longest.size()) {
        longest = stack.reversed().stream().map(f -> f.call().op).toList();
        stuck = entry == null ? null : entry.op;
      }
      if (stack.isEmpty()) {
        return new Violation<>(stuck, longest);
      }
      Frame<S, I, O> f = stack.pop();
      state = f.state();
      linearized = f.linearized();
      unlift(f.call());
      if (f.call().match != null) {
        open++;
      }
      entry = f.call().next;
    }
    return new Linearizable<>(stack.reversed().stream().map(f -> f.call().op).toList());
  }

  /** The invocations and answers in time order (at equal times invocations first: concurrent). */
  private static <I, O> Entry<I, O> list(List<Operation<I, O>> history) {
    List<Entry<I, O>> entries = new ArrayList<>(2 * history.size());
    for (int i = 0; i < history.size(); i++) {
      Operation<I, O> op = Objects.requireNonNull(history.get(i), "operation " + i);
      Entry<I, O> call = new Entry<>(i, op, true);
      entries.add(call);
      if (!op.pending()) {
        call.match = new Entry<>(i, op, false);
        entries.add(call.match);
      }
    }
    entries.sort(Comparator.<Entry<I, O>>comparingLong(e -> e.call ? e.op.invoked() : e.op.returned())
        .thenComparing(e -> e.call ? 0 : 1));
    Entry<I, O> head = new Entry<>(-1, null, true);
    Entry<I, O> last = head;
    java.util.Map<I, Entry<I, O>> lastPending = new java.util.HashMap<>();
    for (Entry<I, O> e : entries) {
      last.next = e;
      e.prev = last;
      last = e;
      if (e.call && e.match == null) {
        e.sameBefore = lastPending.put(e.op.input(), e);
      }
    }
    return head;
  }

  /** Takes a call and its answer out of the list (they keep their own links, for {@link #unlift}). */
  private static <I, O> void lift(Entry<I, O> call) {
    call.prev.next = call.next;
    if (call.next != null) {
      call.next.prev = call.prev;
    }
    Entry<I, O> r = call.match;
    if (r != null) {
      r.prev.next = r.next;
      if (r.next != null) {
        r.next.prev = r.prev;
      }
    }
  }

  /** Puts back what the matching {@link #lift} took out (lifts are undone in reverse order). */
  private static <I, O> void unlift(Entry<I, O> call) {
    Entry<I, O> r = call.match;
    if (r != null) {
      r.prev.next = r;
      if (r.next != null) {
        r.next.prev = r;
      }
    }
    call.prev.next = call;
    if (call.next != null) {
      call.next.prev = call;
    }
  }
}
