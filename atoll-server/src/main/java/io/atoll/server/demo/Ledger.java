package io.atoll.server.demo;

import io.atoll.runtime.DeliveryException;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.LongAdder;

/**
 * The load generator's own record of what it sent and what was acknowledged: the independent
 * ledger the demo's result is checked against (never the runtime's counters). Thread-safe.
 */
public final class Ledger {

  /** What one acknowledged deposit was. @param account the account @param amount the amount */
  public record Op(String account, long amount) {}

  final LongAdder sent = new LongAdder();
  final LongAdder acked = new LongAdder();
  final LongAdder failed = new LongAdder();
  final LongAdder reads = new LongAdder();
  final LongAdder staleReads = new LongAdder();
  final Map<Long, Op> ackedOps = new ConcurrentHashMap<>();
  final Map<String, LongAdder> ackedSum = new ConcurrentHashMap<>();
  final Map<DeliveryException.Reason, LongAdder> failures = new ConcurrentHashMap<>();
  /** Deposits refused as OVERLOADED: refused before any handler saw them, so never applied. */
  final Set<Long> refusedOps = ConcurrentHashMap.newKeySet();
  final Outcomes outcomes = new Outcomes();

  /** When each deposit was sent and answered (recorded by the load). */
  public Outcomes outcomes() {
    return outcomes;
  }

  /** A deposit was sent. */
  public void sent() {
    sent.increment();
  }

  /** Deposit {@code op} of {@code amount} to {@code account} was acknowledged. */
  public void acked(long op, String account, long amount) {
    ackedOps.put(op, new Op(account, amount));
    ackedSum.computeIfAbsent(account, k -> new LongAdder()).add(amount);
    acked.increment();
  }

  /** Deposit {@code op} failed with {@code t}; returns why. */
  public DeliveryException.Reason failed(long op, Throwable t) {
    failed.increment();
    DeliveryException.Reason r = reason(t);
    failures.computeIfAbsent(r, k -> new LongAdder()).increment();
    if (r == DeliveryException.Reason.OVERLOADED) {
      refusedOps.add(op);
    }
    return r;
  }

  /** Why a send failed ({@code OUTCOME_UNKNOWN} for anything but a delivery failure). */
  static DeliveryException.Reason reason(Throwable t) {
    Throwable c = t instanceof java.util.concurrent.CompletionException && t.getCause() != null ? t.getCause() : t;
    return c instanceof DeliveryException d ? d.reason() : DeliveryException.Reason.OUTCOME_UNKNOWN;
  }

  /** The deposits refused as overloaded, which the database must not hold. */
  public Set<Long> refusedOps() {
    return refusedOps;
  }

  long ackedSum(String account) {
    LongAdder a = ackedSum.get(account);
    return a == null ? 0 : a.sum();
  }

  /** The acknowledged operation ids. */
  public Set<Long> ackedOps() {
    return ackedOps.keySet();
  }

  public long sentCount() {
    return sent.sum();
  }

  public long ackedCount() {
    return acked.sum();
  }

  public long failedCount() {
    return failed.sum();
  }

  public long staleReads() {
    return staleReads.sum();
  }

  public long reads() {
    return reads.sum();
  }

  public Map<DeliveryException.Reason, LongAdder> failures() {
    return failures;
  }
}
