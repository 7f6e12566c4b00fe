package io.atoll.server.demo;

import io.atoll.runtime.DeliveryException;
import java.io.PrintStream;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.LongAdder;

/** Prints the end of a demo or chaos run: the audit of the ledger and the activation log's check. */
public final class RunReport {

  private final PrintStream out;

  /** Prints to {@code out}. */
  public RunReport(PrintStream out) {
    this.out = out;
  }

  /**
   * Prints the summary; returns whether the run kept every promise (the audit is OK and no two
   * activations overlapped).
   */
  public boolean print(Audit a, Ledger ledger, ActivationLog.Result log, String where) {
    out.println();
    out.println("== summary ==");
    out.printf("deposits sent          %,d%n", a.sent());
    out.printf("acknowledged           %,d%n", a.acknowledged());
    StringBuilder why = new StringBuilder();
    for (Map.Entry<DeliveryException.Reason, LongAdder> e : ledger.failures().entrySet()) {
      why.append(why.isEmpty() ? " (" : ", ").append(e.getKey().name().toLowerCase(Locale.ROOT))
          .append(' ').append(e.getValue().sum());
    }
    if (!why.isEmpty()) {
      why.append(')');
    }
    out.printf("unacknowledged         %,d%s: refused as overloaded (never handled), or failed or timed out (may"
        + " or may not be applied)%n", a.unacknowledged(),
        why);
    out.printf("  of which applied     %,d%n", a.appliedUnacknowledged());
    out.printf("refused yet applied    %,d   (refused as overloaded, so never handled, but in the database)%n",
        a.appliedRefused());
    out.printf("lost                   %,d   (acknowledged but missing from the database)%n", a.lost());
    out.printf("duplicate activations  %,d   (a handler of an activation starting after an activation of the"
        + " same account%n                             with a greater token had started: its lease had run out)%n",
        a.duplicateActivations());
    out.printf("overlapping activations %,d  (two activations of one account live at once: a write applied after a"
        + " newer%n                             activation's claim in the database's order, or the same token"
        + " overlapping in time)%n", log.overlapping());
    out.printf("  excused              %,d   (late starts in a process frozen (SIGSTOP) between its lease check and"
        + " the handler)%n", log.excused());
    log.findings().stream().limit(10).forEach(o -> out.println("  " + o.describe()));
    out.printf("fenced writes          %,d   (writes refused by the fencing token; %,d from handlers already running"
        + "%n                             when the newer activation started: the fencing working)%n",
        a.fencedWrites(), log.fencedInFlight());
    out.printf("unbalanced accounts    %,d   (balance differs from the sum of its deposits)%n", a.unbalancedAccounts());
    out.printf("stale balance reads    %,d of %,d%n", a.staleReads(), ledger.reads());
    out.printf("duplicate deposits     %,d   (a deposit delivered twice, refused by its op id)%n", a.duplicateDeposits());
    out.printf("activations            %,d%n", a.activations());
    boolean ok = a.ok() && log.overlapping() == 0;
    out.println(ok ? "result: OK, nothing lost, no entity ever live twice"
        : "result: FAILED (see above; logs in " + where + ")");
    out.println("guarantee checked: per account, no write of an activation applied after the claim of one with a"
        + " greater token (the database's order), no two activations with one token live at once (wall clock), and no"
        + " handler started after its lease ran out but in a process frozen between its lease check and the handler;"
        + " assuming one wall clock for every process here, the pods' monotonic clocks running at the manager's"
        + " rate within the lease margin, and the database refusing older tokens");
    return ok;
  }

  /**
   * Prints how the deposits ended in steady state and around the kills (in flight at a kill -9, or
   * sent within {@code windowNanos} after one), and when the first was acknowledged
   * ({@code firstAckMillis} after the load started, -1 if never).
   */
  public static void printPhases(PrintStream out, Outcomes.Split split, long windowNanos, long firstAckMillis,
      long notKept) {
    out.println();
    out.println("== how the deposits ended ==");
    phase(out, "steady state", split.steady());
    phase(out, "around a kill -9", split.aroundKills());
    out.printf("                       (in flight at a kill -9, or sent within %d s after one)%n",
        TimeUnit.NANOSECONDS.toSeconds(windowNanos));
    if (notKept > 0) {
      out.printf("not split              %,d (ended after the first %,d deposits, which alone are kept)%n", notKept,
          Outcomes.MAX_KEPT);
    }
    out.println(firstAckMillis < 0 ? "first acknowledgement  none"
        : String.format("first acknowledgement  %,d ms after the load started", firstAckMillis));
  }

  private static void phase(PrintStream out, String name, Outcomes.Tally t) {
    out.printf("%-22s %,d sent: %,d acknowledged, %,d refused as overloaded, %,d timed out, %,d failed"
        + " (%.2f %% acknowledged or refused)%n", name, t.sent(), t.acked(), t.refused(), t.timedOut(), t.failed(),
        t.answered() * 100);
  }
}
