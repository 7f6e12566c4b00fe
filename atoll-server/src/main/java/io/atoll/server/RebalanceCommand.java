package io.atoll.server;

import io.atoll.transport.grpc.Wire;
import io.atoll.transport.grpc.proto.GetAssignmentsRequest;
import io.atoll.transport.grpc.proto.RebalanceRequest;
import io.atoll.transport.grpc.proto.RebalanceResponse;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import java.io.PrintStream;
import java.time.Duration;
import java.util.concurrent.Callable;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;

/**
 * {@code atoll rebalance}: asks the manager for rebalance rounds until every shard is in place (or
 * the deadline), showing how many of the planned moves are done as it goes.
 */
@Command(name = "rebalance", mixinStandardHelpOptions = true,
    description = {"Runs rebalance rounds now until every shard is in place, showing the shards moved of those",
        "planned as it goes (in place on a terminal, a line per round otherwise), then the shards per pod.",
        "Exits 1 if the manager cannot be reached or the shards are not in place by --timeout."})
final class RebalanceCommand implements Callable<Integer> {

  /** Between two rounds that moved nothing while moves are still planned (a pod did not answer). */
  private static final long IDLE_ROUND_PAUSE_MILLIS = 500;

  @Mixin
  Main.ConfigOption config;

  @Mixin
  TlsOptions tls;

  @Option(names = "--manager", required = true, description = "The shard manager, host:port.")
  String manager;

  @Option(names = "--timeout", defaultValue = "60s", description = "Give up unless every shard is in place by then"
      + " (default: ${DEFAULT-VALUE}).")
  Duration timeout;

  @Override
  public Integer call() {
    if (timeout.isNegative() || timeout.isZero()) {
      System.err.println("atoll rebalance: --timeout " + Durations.format(timeout) + " (expected: > 0)");
      return 2;
    }
    boolean terminal = System.console() != null;
    return ManagerCall.session("rebalance", manager, tls, stubs -> {
      Progress progress = new Progress(System.out, terminal);
      long deadline = System.nanoTime() + timeout.toNanos();
      while (true) {
        long left = deadline - System.nanoTime();
        if (left <= 0) {
          return progress.gaveUp(timeout);
        }
        RebalanceResponse r;
        try {
          r = stubs.apply(Duration.ofNanos(left)).rebalance(RebalanceRequest.getDefaultInstance());
        } catch (StatusRuntimeException e) {
          if (e.getStatus().getCode() == Status.Code.DEADLINE_EXCEEDED && progress.rounds() > 0) {
            return progress.gaveUp(timeout);
          }
          progress.interrupted();
          throw e;
        }
        progress.round(r.getMoved(), r.getRemaining(), r.getEpoch());
        if (r.getRemaining() == 0) {
          progress.done();
          System.out.print(StatusCommand.render(Wire.config(stubs.apply(Duration.ofNanos(Math.max(left,
              TimeUnit.SECONDS.toNanos(5)))).getAssignments(GetAssignmentsRequest.getDefaultInstance()))));
          return 0;
        }
        if (r.getMoved() == 0) {
          // A round that moved nothing while moves are planned: a pod did not answer; ask again shortly.
          LockSupport.parkNanos(Math.min(deadline - System.nanoTime(),
              TimeUnit.MILLISECONDS.toNanos(IDLE_ROUND_PAUSE_MILLIS)));
        }
      }
    });
  }

  /**
   * Shards moved of those planned, as rounds report them. A round reports what it moved and what is
   * still planned after it; rounds the manager ran on its own between two answers are counted by
   * the drop of what is still planned, and work that appears (a pod joined) raises the plan.
   */
  static final class Progress {
    private final PrintStream out;
    private final boolean terminal;
    private int rounds;
    private int moved;
    private int planned;
    private long epoch;

    Progress(PrintStream out, boolean terminal) {
      this.out = out;
      this.terminal = terminal;
    }

    int rounds() {
      return rounds;
    }

    int moved() {
      return moved;
    }

    int planned() {
      return planned;
    }

    /** A round moved {@code roundMoved} shards; {@code remaining} moves are still planned. */
    void round(int roundMoved, int remaining, long epochAfter) {
      if (rounds++ == 0) {
        moved = roundMoved;
        planned = roundMoved + remaining;
      } else if (remaining <= planned - moved) {
        moved = planned - remaining;
      } else {
        moved += roundMoved;
        planned = moved + remaining;
      }
      epoch = epochAfter;
      if (planned == 0) {
        return;
      }
      String line = String.format("rebalance: %d of %d shards moved, %d to go (round %d, epoch %d)", moved, planned,
          remaining, rounds, epoch);
      if (terminal) {
        out.print("\r\033[2K" + line);
      } else {
        out.println(line);
      }
      out.flush();
    }

    /** Every shard is in place. */
    void done() {
      endLine();
      out.println(planned == 0 ? "rebalance: nothing to move; every shard is in place (epoch " + epoch + ")"
          : "rebalance: done: " + moved + " of " + planned + " shards moved; every shard is in place (epoch "
          + epoch + ")");
    }

    /** The deadline passed with moves still planned; returns the exit code. */
    int gaveUp(Duration timeout) {
      endLine();
      System.err.println("atoll rebalance: not in place after " + Durations.format(timeout) + ": " + moved + " of "
          + planned + " shards moved, " + (planned - moved) + " to go (a pod may not answer the manager's pings or"
          + " hand-offs; see the manager's log, or retry with a longer --timeout)");
      return 1;
    }

    /** A call failed: ends the progress line so that the error starts on its own. */
    void interrupted() {
      endLine();
      if (rounds > 0) {
        System.err.println("atoll rebalance: stopped after " + moved + " of " + planned + " shards moved");
      }
    }

    private void endLine() {
      if (terminal && rounds > 0 && planned > 0) {
        out.println();
      }
    }
  }
}
