package io.atoll.testkit.history;

import static io.atoll.testkit.history.RedisKey.Command.get;
import static io.atoll.testkit.history.RedisKey.Command.incr;
import static io.atoll.testkit.history.RedisKey.Command.set;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.atoll.testkit.history.Linearizability.Undecided;
import io.atoll.testkit.history.Linearizability.Verdict;
import io.atoll.testkit.history.Linearizability.Violation;
import io.atoll.testkit.history.RedisKey.Command;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

class LinearizabilityTest {

  private static Operation<Command, String> op(Command c, String out, long from, long to) {
    return new Operation<>(c, out, from, to);
  }

  private static Operation<Command, String> lost(Command c, long from) {
    return Operation.pending(c, from);
  }

  private static Verdict<Command, String> check(List<Operation<Command, String>> h) {
    return Linearizability.check(new RedisKey(), h);
  }

  @Test
  void aSequentialHistoryIsLinearizable() {
    assertThat(check(List.of(op(get(), null, 0, 1), op(set("a"), "OK", 2, 3), op(get(), "a", 4, 5),
        op(set("7"), "OK", 6, 7), op(incr(), "8", 8, 9), op(get(), "8", 10, 11))).ok()).isTrue();
  }

  @Test
  void aStaleReadIsCaught() {
    Verdict<Command, String> v = check(List.of(op(set("a"), "OK", 0, 1), op(set("b"), "OK", 2, 3),
        op(get(), "a", 4, 5)));
    assertThat(v).isInstanceOf(Violation.class);
    assertThat(((Violation<Command, String>) v).stuck().input()).isEqualTo(get());
  }

  @Test
  void aLostAcknowledgedWriteIsCaught() {
    assertThat(check(List.of(op(set("a"), "OK", 0, 1), op(get(), null, 2, 3))).ok()).isFalse();
    assertThat(check(List.of(op(incr(), "1", 0, 1), op(incr(), "2", 2, 3), op(get(), "1", 4, 5))).ok()).isFalse();
  }

  @Test
  void aReadOfAValueNeverWrittenIsCaught() {
    assertThat(check(List.of(op(set("a"), "OK", 0, 1), op(get(), "z", 2, 3))).ok()).isFalse();
  }

  @Test
  void aReadConcurrentWithAWriteSeesEitherValueButNeverGoesBack() {
    assertThat(check(List.of(op(set("a"), "OK", 0, 10), op(get(), null, 1, 2), op(get(), "a", 3, 4))).ok())
        .isTrue();
    assertThat(check(List.of(op(set("a"), "OK", 0, 10), op(get(), "a", 1, 2), op(get(), null, 3, 4))).ok())
        .isFalse();
    // Two concurrent writes: readers may see them in either order, but all in the same one.
    assertThat(check(List.of(op(set("a"), "OK", 0, 10), op(set("b"), "OK", 0, 10), op(get(), "a", 11, 12),
        op(get(), "a", 13, 14))).ok()).isTrue();
    assertThat(check(List.of(op(set("a"), "OK", 0, 10), op(set("b"), "OK", 0, 10), op(get(), "b", 11, 12),
        op(get(), "a", 13, 14))).ok()).isFalse();
  }

  @Test
  void aWriteWithoutAnAnswerMayLandLateButOnlyOnce() {
    List<Operation<Command, String>> h = new ArrayList<>(List.of(op(set("a"), "OK", 0, 1), lost(set("b"), 2),
        op(get(), "a", 3, 4), op(get(), "b", 5, 6)));
    assertThat(check(h).ok()).as("b landed after the first read").isTrue();
    h.add(op(get(), "a", 7, 8));
    assertThat(check(h).ok()).as("a again after b: b would have landed twice, or a was written again").isFalse();
    assertThat(check(List.of(lost(set("b"), 5), op(get(), "b", 1, 4))).ok()).as("b read before it was sent")
        .isFalse();
  }

  @Test
  void anIncrementWithoutAnAnswerCountsAtMostOnce() {
    List<Operation<Command, String>> h = new ArrayList<>(List.of(op(incr(), "1", 0, 1), lost(incr(), 2),
        op(get(), "2", 3, 4), op(incr(), "3", 5, 6)));
    assertThat(check(h).ok()).isTrue();
    assertThat(check(List.of(op(incr(), "1", 0, 1), lost(incr(), 2), op(get(), "3", 3, 4))).ok()).isFalse();
    assertThat(check(List.of(op(incr(), "1", 0, 1), lost(incr(), 2), op(get(), "1", 3, 4))).ok())
        .as("it may never have landed").isTrue();
  }

  @Test
  void manyIncrementsWithoutAnswerAreTriedAsOneChoiceEach() {
    List<Operation<Command, String>> h = new ArrayList<>();
    for (int i = 0; i < 60; i++) {
      h.add(lost(incr(), i));
    }
    h.add(op(get(), "30", 100, 101));
    h.add(op(get(), "61", 102, 103));
    // 2^60 subsets if each were its own choice; a few thousand steps as interchangeable ones.
    Verdict<Command, String> v = Linearizability.check(new RedisKey(), h, 100_000);
    assertThat(v).isInstanceOf(Violation.class);
    h.set(h.size() - 1, op(get(), "60", 102, 103));
    assertThat(Linearizability.check(new RedisKey(), h, 100_000).ok()).isTrue();
  }

  @Test
  void aSearchPastItsBudgetIsUndecidedNotPassed() {
    List<Operation<Command, String>> h = new ArrayList<>();
    for (int i = 0; i < 16; i++) {
      h.add(op(set("v" + i), "OK", 0, 100));
    }
    h.add(op(get(), "nothing written", 101, 102));
    assertThat(Linearizability.check(new RedisKey(), h, 1_000)).isInstanceOf(Undecided.class);
  }

  @Test
  void theOrderOfALinearizableHistoryExplainsEveryAnswer() {
    List<Operation<Command, String>> h = List.of(op(set("a"), "OK", 0, 10), op(get(), "b", 1, 20),
        op(set("b"), "OK", 2, 12), op(get(), "a", 3, 4));
    Verdict<Command, String> v = check(h);
    assertThat(v).isInstanceOf(Linearizability.Linearizable.class);
    assertThat(((Linearizability.Linearizable<Command, String>) v).order())
        .containsExactly(h.get(0), h.get(3), h.get(2), h.get(1));
  }

  @Test
  void manyReadsWithoutAnswerDoNotSlowAViolationDown() {
    List<Operation<Command, String>> h = new ArrayList<>();
    for (int i = 0; i < 2000; i++) {
      h.add(op(incr(), Long.toString(i + 1), 10L * i, 10L * i + 5));
      if (i % 20 == 0) {
        h.add(lost(get(), 10L * i + 1));
      }
    }
    h.add(op(get(), "1999", 100_000, 100_001)); // stale: 2000 was answered before
    assertThat(Linearizability.check(new RedisKey(), h, 1_000_000)).isInstanceOf(Violation.class);
  }

  @Test
  void incrementReadsIntegersAsRedisDoes() {
    assertThat(check(List.of(op(set("05"), "OK", 0, 1), op(incr(), "ERR", 2, 3))).ok()).isTrue();
    assertThat(check(List.of(op(set("+5"), "OK", 0, 1), op(incr(), "ERR", 2, 3))).ok()).isTrue();
    assertThat(check(List.of(op(set("-0"), "OK", 0, 1), op(incr(), "ERR", 2, 3))).ok()).isTrue();
    assertThat(check(List.of(op(set("-5"), "OK", 0, 1), op(incr(), "-4", 2, 3))).ok()).isTrue();
    assertThatThrownBy(() -> new Command(RedisKey.Kind.SET, null)).isInstanceOf(IllegalArgumentException.class);
    assertThatThrownBy(() -> new Command(RedisKey.Kind.GET, "x")).isInstanceOf(IllegalArgumentException.class);
  }

  @Test
  void pruningDropsWhatCannotChangeTheVerdict() {
    List<Operation<Command, String>> h = List.of(op(set("a"), "OK", 0, 1), lost(set("b"), 2), lost(set("c"), 3),
        lost(get(), 4), op(get(), "c", 5, 6));
    assertThat(RedisKey.prune(h)).containsExactly(h.get(0), h.get(2), h.get(4));
    List<Operation<Command, String>> withIncr = List.of(op(set("a"), "OK", 0, 1), lost(set("5"), 2),
        op(incr(), "6", 3, 4));
    assertThat(RedisKey.prune(withIncr)).as("a SET nobody read still moves a counter").isEqualTo(withIncr);
  }
}
