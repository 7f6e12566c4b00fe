package io.atoll.testkit.history;

import static org.assertj.core.api.Assertions.assertThat;

import io.atoll.testkit.history.RedisKey.Command;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.constraints.IntRange;

class LinearizabilityProperties {

  private static final RedisKey MODEL = new RedisKey();

  /**
   * A history made by running commands one at a time on the model, each given an instant, then
   * widening each into an interval around its instant (some losing their answer), is linearizable.
   */
  @Property
  void anyRealExecutionIsLinearizable(@ForAll long seed, @ForAll @IntRange(min = 1, max = 40) int n) {
    List<Operation<Command, String>> h = execution(new Random(seed), n);
    assertThat(Linearizability.check(MODEL, h).ok()).as("%s", h).isTrue();
    assertThat(Linearizability.check(MODEL, RedisKey.prune(h)).ok()).isTrue();
  }

  /** The same with one answered GET changed to a value never written: caught, with or without pruning. */
  @Property
  void aReadOfAValueNeverWrittenIsAlwaysCaught(@ForAll long seed, @ForAll @IntRange(min = 1, max = 40) int n) {
    Random r = new Random(seed);
    List<Operation<Command, String>> h = execution(r, n);
    List<Integer> reads = new ArrayList<>();
    for (int i = 0; i < h.size(); i++) {
      if (h.get(i).input().kind() == RedisKey.Kind.GET && !h.get(i).pending()) {
        reads.add(i);
      }
    }
    if (reads.isEmpty()) {
      return;
    }
    int i = reads.get(r.nextInt(reads.size()));
    Operation<Command, String> o = h.get(i);
    h.set(i, new Operation<>(o.input(), "never written", o.invoked(), o.returned()));
    assertThat(Linearizability.check(MODEL, h).ok()).isFalse();
    assertThat(Linearizability.check(MODEL, RedisKey.prune(h)).ok()).isFalse();
  }

  /** On small random histories (answers drawn at random), the search agrees with trying every order. */
  @Property
  void agreesWithTryingEveryOrder(@ForAll long seed, @ForAll @IntRange(min = 1, max = 6) int n) {
    Random r = new Random(seed);
    List<Operation<Command, String>> h = new ArrayList<>();
    String[] outputs = {null, "OK", "a", "b", "1", "2"};
    for (int i = 0; i < n; i++) {
      Command c = switch (r.nextInt(4)) {
        case 0 -> Command.set("a");
        case 1 -> Command.set("b");
        case 2 -> Command.incr();
        default -> Command.get();
      };
      long from = r.nextInt(10);
      h.add(r.nextInt(5) == 0 ? Operation.pending(c, from)
          : new Operation<>(c, outputs[r.nextInt(outputs.length)], from, from + r.nextInt(6)));
    }
    assertThat(Linearizability.check(MODEL, h).ok()).as("%s", h).isEqualTo(bruteForce(h));
  }

  /** Runs {@code n} random commands on the model with distinct SET values, then blurs their times. */
  private static List<Operation<Command, String>> execution(Random r, int n) {
    RedisKey.Value state = MODEL.initial();
    List<Operation<Command, String>> h = new ArrayList<>();
    boolean counter = r.nextBoolean();
    for (int i = 0; i < n; i++) {
      Command c = switch (r.nextInt(3)) {
        case 0 -> counter ? Command.incr() : Command.set("v" + i);
        case 1 -> Command.get();
        default -> counter ? Command.incr() : Command.set("w" + i);
      };
      long at = 100L * i;
      boolean lost = r.nextInt(6) == 0;
      if (lost && c.kind() == RedisKey.Kind.GET) {
        h.add(Operation.pending(c, at - r.nextInt(300)));
        continue;
      }
      if (lost && r.nextBoolean()) {
        h.add(Operation.pending(c, at - r.nextInt(300))); // sent, never took effect
        continue;
      }
      Model.Step<RedisKey.Value, String> step = MODEL.apply(state, c);
      state = step.state();
      h.add(lost ? Operation.pending(c, at - r.nextInt(300))
          : new Operation<>(c, step.output(), at - r.nextInt(300), at + r.nextInt(300)));
    }
    return h;
  }

  private static boolean bruteForce(List<Operation<Command, String>> h) {
    return search(h, new boolean[h.size()], MODEL.initial());
  }

  /** Whether the operations not yet used can follow in some order (pending ones optional). */
  private static boolean search(List<Operation<Command, String>> h, boolean[] used, RedisKey.Value state) {
    boolean allAnsweredUsed = true;
    for (int i = 0; i < h.size(); i++) {
      if (!used[i] && !h.get(i).pending()) {
        allAnsweredUsed = false;
      }
    }
    if (allAnsweredUsed) {
      return true;
    }
    for (int i = 0; i < h.size(); i++) {
      if (used[i]) {
        continue;
      }
      Operation<Command, String> o = h.get(i);
      boolean minimal = true; // no unused operation answered before this one was sent
      for (int j = 0; j < h.size(); j++) {
        if (!used[j] && j != i && h.get(j).returned() < o.invoked()) {
          minimal = false;
        }
      }
      if (!minimal) {
        continue;
      }
      Model.Step<RedisKey.Value, String> s = MODEL.apply(state, o.input());
      if (!o.pending() && !java.util.Objects.equals(s.output(), o.output())) {
        continue;
      }
      used[i] = true;
      boolean ok = search(h, used, s.state());
      used[i] = false;
      if (ok) {
        return true;
      }
    }
    return false;
  }
}
