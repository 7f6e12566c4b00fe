package io.atoll.server;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import org.junit.jupiter.api.Test;

/** How {@code atoll rebalance} counts the moves done of those planned from the rounds' answers. */
class RebalanceProgressTest {

  private final ByteArrayOutputStream bytes = new ByteArrayOutputStream();
  private final PrintStream out = new PrintStream(bytes, true, StandardCharsets.UTF_8);

  private String text() {
    return bytes.toString(StandardCharsets.UTF_8);
  }

  @Test
  void roundsTheManagerChainedBetweenTwoAnswersCountThroughWhatIsStillPlanned() {
    RebalanceCommand.Progress p = new RebalanceCommand.Progress(out, false);
    p.round(2, 14, 10); // 16 planned, 2 moved
    p.round(2, 8, 13); // two more rounds ran on their own before this answer: 8 moved
    assertThat(p.moved()).isEqualTo(8);
    assertThat(p.planned()).isEqualTo(16);
    p.round(2, 0, 17);
    p.done();
    assertThat(text()).contains("rebalance: 2 of 16 shards moved, 14 to go (round 1, epoch 10)")
        .contains("rebalance: 8 of 16 shards moved, 8 to go (round 2, epoch 13)")
        .contains("rebalance: done: 16 of 16 shards moved; every shard is in place (epoch 17)");
  }

  @Test
  void workThatAppearsMidwayRaisesThePlan() {
    RebalanceCommand.Progress p = new RebalanceCommand.Progress(out, false);
    p.round(2, 4, 5); // 6 planned
    p.round(2, 9, 6); // a pod joined: 4 moved, 9 still planned
    assertThat(p.moved()).isEqualTo(4);
    assertThat(p.planned()).isEqualTo(13);
  }

  @Test
  void nothingToMoveSaysSoAndATerminalRedrawsInPlace() {
    RebalanceCommand.Progress none = new RebalanceCommand.Progress(out, false);
    none.round(0, 0, 3);
    none.done();
    assertThat(text()).isEqualTo("rebalance: nothing to move; every shard is in place (epoch 3)"
        + System.lineSeparator());
    bytes.reset();
    RebalanceCommand.Progress tty = new RebalanceCommand.Progress(out, true);
    tty.round(1, 1, 4);
    tty.round(1, 0, 5);
    tty.done();
    assertThat(text()).startsWith("\r\033[2Krebalance: 1 of 2").contains("\r\033[2Krebalance: 2 of 2")
        .contains(System.lineSeparator() + "rebalance: done: 2 of 2");
  }
}
