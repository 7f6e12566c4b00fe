package io.atoll.server.demo;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.OptionalLong;

/**
 * Checks the activation log the accounts write to their database ({@link AccountDb}) for two
 * activations of one account live at once, in the order the database serialized things where
 * the database can fence, and by the wall clock where it cannot.
 *
 * <p>Per account, activations are ordered by fencing token (epoch, then lease generation); the
 * database serializes claims in that order, since a claim is refused once the row carries a newer
 * token. Three findings:
 * <ol>
 *   <li><b>Same token, overlapping</b> (two live instances): two activations carrying the same
 *       token, the later one started (its factory, before its claim) before the earlier one's
 *       last write or termination message ended. The database cannot tell them apart, so the
 *       check is by the wall clock, and strict: it counts from the later one's first instant.
 *   <li><b>Applied after a newer claim</b> (two live instances): a deposit (or a claim) of an
 *       activation applied after the claim of an activation with a greater token, by the
 *       account row's sequence ({@code ops.seq}, {@code activations.claim_seq}). The fencing
 *       token forbids it; a write refused by the token is the fencing working, and one applied
 *       before the newer claim (a thawed process finishing a deposit before the newer activation
 *       reached the database) is serialized before it: one instance after the other.
 *   <li><b>Started late</b> (a duplicate activation): a handler of an activation (a deposit,
 *       applied or refused, or its termination message), its factory, or a refused claim,
 *       that <em>started</em> after an activation with a greater token of the same account had
 *       started. A greater token exists only once this one's lease had run out (the manager
 *       moves a shard after the old owner's lease plus margin, or after a hand-off that ended
 *       its activations; a new lease generation after a lapse), and a pod checks its lease
 *       (by its monotonic clock) before each handler and again after a factory returned, so
 *       the runtime should have kept that handler from starting. The one case no code can
 *       prevent is excused, and counted apart: the process was frozen (SIGSTOP) between that
 *       check and the handler's first line. It is excused only if the pod has a freeze that
 *       began before the newer activation started and ended before this handler started, and
 *       nothing else of this activation started between the thaw and this handler (its drain
 *       runs one message at a time, so only the one handler whose check came before the freeze
 *       can start late; its factory returning after the thaw means the check after the factory
 *       came after the thaw too).
 * </ol>
 * Refused writes from handlers that started before any newer activation did are the fencing
 * working (a handler in flight when the shard moved), counted apart as well.
 *
 * <p>What this rests on: every process of the run reads the same wall clock (one machine), and
 * the database is the only place the accounts' state lives.
 */
public final class ActivationLog {

  /** When a pod's process was frozen, for the excuse above. */
  @FunctionalInterface
  public interface Freezes {
    /** Nothing was ever frozen. */
    Freezes NONE = (pod, frozenBefore, thawedBy) -> OptionalLong.empty();

    /**
     * Of the freezes of the process of {@code pod} (as the log names it) that began before {@code
     * frozenBefore} and ended (SIGCONT) at or before {@code thawedBy} (microseconds), when the
     * last one ended; empty if none did.
     */
    OptionalLong thawed(String pod, long frozenBefore, long thawedBy);
  }

  /**
   * An activation as logged (or a refused claim, with id -1).
   *
   * @param id its id in the log; -1 for a claim the database refused
   * @param account the account
   * @param pod the pod it ran in
   * @param epoch its fencing token's epoch
   * @param generation its fencing token's lease generation
   * @param started when its factory started, before the claim (microseconds)
   * @param claimed when its claim had committed, as its pod saw it; -1 if not logged
   * @param claimSeq its claim's place in the account row's order; -1 if not logged
   * @param stopped when its termination message ran; -1 if it never did
   * @param lastEnd when its last write, its termination message or its factory ended
   */
  public record Activation(long id, String account, String pod, long epoch, long generation, long started,
      long claimed, long claimSeq, long stopped, long lastEnd) {

    int compareToken(Activation o) {
      int c = Long.compare(epoch, o.epoch);
      return c != 0 ? c : Long.compare(generation, o.generation);
    }

    String name() {
      return (id < 0 ? "a refused claim" : "activation " + id) + " on " + pod + " (token " + epoch + "/" + generation
          + ")";
    }
  }

  /** What a finding is. */
  public enum Kind {
    /** Two activations with the same token live at once by the wall clock. */
    SAME_TOKEN_OVERLAP,
    /** A write or claim applied after the claim of a greater token. */
    APPLIED_AFTER_NEWER_CLAIM,
    /** A handler, factory or claim that started after an activation with a greater token started. */
    LATE_START
  }

  /**
   * One thing the check found.
   *
   * @param kind what
   * @param older the activation that acted, or was live
   * @param newer the activation it collided with
   * @param what what the older one did ("deposit op 7 (refused)", "its termination message", ...)
   * @param at when that started (microseconds), or, for an overlap, when the older one was live until
   * @param seq for an applied write, its place in the row's order; else -1
   * @param excused a late start in a process frozen between its lease check and the handler
   */
  public record Finding(Kind kind, Activation older, Activation newer, String what, long at, long seq,
      boolean excused) {
    /** One line for a report. */
    public String describe() {
      return switch (kind) {
        case SAME_TOKEN_OVERLAP -> String.format("account %s: %s and activation %d with the same token: the later"
                + " one started %.1f ms before the earlier one's last write or stop ended (two live instances the"
                + " token cannot tell apart)", older.account(), older.name(), newer.id(),
            (older.lastEnd() - newer.started()) / 1000.0);
        case APPLIED_AFTER_NEWER_CLAIM -> String.format("account %s: %s had %s applied at position %d of the row,"
                + " after %s claimed it at position %d (two live instances)", older.account(), older.name(), what,
            seq, newer.name(), newer.claimSeq());
        case LATE_START -> String.format("account %s: %s started %s %.1f ms after %s had started (its lease had run"
                + " out)%s", older.account(), older.name(), what, (at - newer.started()) / 1000.0, newer.name(),
            excused ? " (excused: its process was frozen between its lease check and the handler)"
                : " (a duplicate activation)");
      };
    }
  }

  /**
   * What the check found.
   *
   * @param activations activations in the log
   * @param findings every finding, excused or not
   * @param fencedInFlight writes and claims refused by the token whose handler started before any
   *     newer activation of the account did: the fencing working
   */
  public record Result(long activations, List<Finding> findings, long fencedInFlight) {
    /** Two activations live at once: the same token overlapping, or a write applied after a newer claim. */
    public long overlapping() {
      return findings.stream().filter(f -> f.kind() != Kind.LATE_START).count();
    }

    /** Handlers that started after a newer activation had, not excused: duplicate activations. */
    public long lateStarts() {
      return findings.stream().filter(f -> f.kind() == Kind.LATE_START && !f.excused()).count();
    }

    /** Late starts excused as a process frozen between its lease check and the handler. */
    public long excused() {
      return findings.stream().filter(Finding::excused).count();
    }
  }

  private ActivationLog() {}

  /** Per activation: the activations of its account with a greater token that started and claimed first. */
  private record Newer(Activation firstStarted, Activation firstClaimed) {}

  /** An account's activations ordered by token, with the first to start from each position on. */
  private record ByToken(List<Activation> sorted, Activation[] firstStartedFrom) {
    /** The first activation to start among those with a token greater than ({@code epoch}, {@code generation}). */
    Activation firstStartedAbove(long epoch, long generation) {
      int lo = 0;
      int hi = sorted.size();
      while (lo < hi) { // the first position whose token is greater
        int mid = (lo + hi) >>> 1;
        Activation m = sorted.get(mid);
        if (m.epoch() > epoch || (m.epoch() == epoch && m.generation() > generation)) {
          hi = mid;
        } else {
          lo = mid + 1;
        }
      }
      return lo < sorted.size() ? firstStartedFrom[lo] : null;
    }
  }

  private record Candidate(Activation older, Activation newer, String what, long at) {}

  /** Checks the log in the database at {@code url}. */
  public static Result check(String url, Freezes freezes) throws SQLException {
    try (Connection c = Audit.snapshot(url)) {
      Map<Long, Long> lastWrite = lastWrites(c);
      Map<String, List<Activation>> byAccount = new HashMap<>();
      Map<Long, Activation> byId = new HashMap<>();
      long count = 0;
      try (Statement s = c.createStatement(); ResultSet rs = s.executeQuery("SELECT id, account, pod, epoch,"
          + " generation, started, ended, claim_seq, claimed FROM activations")) {
        while (rs.next()) {
          count++;
          long id = rs.getLong(1);
          long started = rs.getLong(6);
          long ended = rs.getLong(7);
          ended = rs.wasNull() ? -1 : ended;
          long claimSeq = rs.getLong(8);
          claimSeq = rs.wasNull() ? -1 : claimSeq;
          long claimed = rs.getLong(9);
          claimed = rs.wasNull() ? -1 : claimed;
          long end = Math.max(Math.max(started, claimed), Math.max(ended, lastWrite.getOrDefault(id, 0L)));
          Activation a = new Activation(id, rs.getString(2), rs.getString(3), rs.getLong(4), rs.getLong(5), started,
              claimed, claimSeq, ended, end);
          byAccount.computeIfAbsent(a.account(), k -> new ArrayList<>()).add(a);
          byId.put(id, a);
        }
      }
      List<Finding> findings = new ArrayList<>();
      List<Candidate> late = new ArrayList<>();
      Map<Long, Newer> newer = new HashMap<>();
      Map<String, ByToken> tokens = new HashMap<>();
      for (Map.Entry<String, List<Activation>> e : byAccount.entrySet()) {
        tokens.put(e.getKey(), account(e.getValue(), newer, findings, late));
      }
      long[] inFlight = {0};
      writes(c, byId, newer, tokens, findings, late, inFlight);
      for (Candidate k : late) {
        findings.add(new Finding(Kind.LATE_START, k.older(), k.newer(), k.what(), k.at(), -1,
            excused(c, k, freezes)));
      }
      return new Result(count, List.copyOf(findings), inFlight[0]);
    }
  }

  /** One account's activations: same-token overlaps, claims out of order, late factories. */
  private static ByToken account(List<Activation> all, Map<Long, Newer> newer, List<Finding> findings,
      List<Candidate> late) {
    List<Activation> sorted = new ArrayList<>(all);
    sorted.sort(Comparator.comparingLong(Activation::epoch).thenComparingLong(Activation::generation)
        .thenComparingLong(Activation::started).thenComparingLong(Activation::id));
    int n = sorted.size();
    Activation[] startedFrom = new Activation[n]; // the first to start among positions i..n-1
    Activation[] claimedFrom = new Activation[n]; // the first to claim among positions i..n-1
    int[] nextToken = new int[n]; // the first position with a greater token
    for (int i = n - 1; i >= 0; i--) {
      Activation a = sorted.get(i);
      Activation s = i + 1 < n ? startedFrom[i + 1] : null;
      startedFrom[i] = s == null || a.started() < s.started() ? a : s;
      Activation c = i + 1 < n ? claimedFrom[i + 1] : null;
      claimedFrom[i] = a.claimSeq() >= 0 && (c == null || a.claimSeq() < c.claimSeq()) ? a : c;
      nextToken[i] = i + 1 < n && sorted.get(i + 1).compareToken(a) != 0 ? i + 1 : i + 1 < n ? nextToken[i + 1] : n;
    }
    Activation live = null; // the same token: by the wall clock, strictly (ordered by start within a token)
    for (int i = 0; i < n; i++) {
      Activation a = sorted.get(i);
      if (live != null && live.compareToken(a) != 0) {
        live = null;
      }
      if (live != null && live.lastEnd() > a.started()) {
        findings.add(new Finding(Kind.SAME_TOKEN_OVERLAP, live, a, "", live.lastEnd(), -1, false));
      }
      if (live == null || a.lastEnd() > live.lastEnd()) {
        live = a;
      }
      Activation startedFirst = nextToken[i] < n ? startedFrom[nextToken[i]] : null;
      Activation claimedFirst = nextToken[i] < n ? claimedFrom[nextToken[i]] : null;
      newer.put(a.id(), new Newer(startedFirst, claimedFirst));
      if (a.claimSeq() >= 0 && claimedFirst != null && a.claimSeq() > claimedFirst.claimSeq()) {
        findings.add(new Finding(Kind.APPLIED_AFTER_NEWER_CLAIM, a, claimedFirst, "its claim", a.started(),
            a.claimSeq(), false));
      }
      if (startedFirst != null && a.started() > startedFirst.started()) {
        late.add(new Candidate(a, startedFirst, "its activation (factory)", a.started()));
      }
    }
    return new ByToken(sorted, startedFrom);
  }

  /** Applied and refused writes, and graceful stops: writes after a newer claim, late handlers. */
  private static void writes(Connection c, Map<Long, Activation> byId, Map<Long, Newer> newer,
      Map<String, ByToken> tokens, List<Finding> findings, List<Candidate> late, long[] inFlight)
      throws SQLException {
    try (Statement s = c.createStatement(); ResultSet rs = s.executeQuery(
        "SELECT activation, started, seq, op_id FROM ops WHERE activation IS NOT NULL")) {
      while (rs.next()) {
        Activation a = byId.get(rs.getLong(1));
        if (a == null) {
          continue;
        }
        Newer nw = newer.get(a.id());
        long started = rs.getLong(2);
        long seq = rs.getLong(3);
        boolean hasSeq = !rs.wasNull();
        long op = rs.getLong(4);
        if (hasSeq && nw.firstClaimed() != null && seq > nw.firstClaimed().claimSeq()) {
          findings.add(new Finding(Kind.APPLIED_AFTER_NEWER_CLAIM, a, nw.firstClaimed(), "deposit op " + op, started,
              seq, false));
        }
        if (nw.firstStarted() != null && started > nw.firstStarted().started()) {
          late.add(new Candidate(a, nw.firstStarted(), "deposit op " + op + " (applied)", started));
        }
      }
    }
    try (Statement s = c.createStatement(); ResultSet rs = s.executeQuery(
        "SELECT account, pod, epoch, generation, activation, started, what FROM stale_writes")) {
      while (rs.next()) {
        long id = rs.getLong(5);
        long started = rs.getLong(6);
        Activation a = byId.get(id);
        Activation first;
        if (a != null) {
          first = newer.get(id).firstStarted();
        } else {
          a = new Activation(-1, rs.getString(1), rs.getString(2), rs.getLong(3), rs.getLong(4), started, -1, -1,
              -1, started);
          ByToken t = tokens.get(a.account());
          first = t == null ? null : t.firstStartedAbove(a.epoch(), a.generation());
        }
        if (first != null && started > first.started()) {
          String what = "activate".equals(rs.getString(7)) ? "a claim" : "a " + rs.getString(7);
          late.add(new Candidate(a, first, what + " (refused by the token)", started));
        } else {
          inFlight[0]++;
        }
      }
    }
    for (Activation a : byId.values()) {
      Activation first = newer.get(a.id()).firstStarted();
      if (a.stopped() >= 0 && first != null && a.stopped() > first.started()) {
        late.add(new Candidate(a, first, "its termination message", a.stopped()));
      }
    }
  }

  /** The excuse of the class comment: a freeze between the lease check and this start. */
  private static boolean excused(Connection c, Candidate k, Freezes freezes) throws SQLException {
    Activation a = k.older();
    OptionalLong thaw = freezes.thawed(a.pod(), k.newer().started(), k.at());
    if (thaw.isEmpty()) {
      return false;
    }
    long from = thaw.getAsLong();
    List<Long> starts = new ArrayList<>();
    if (a.id() >= 0) {
      if (a.claimed() < 0) {
        return false; // when its factory returned is not known: nothing to excuse it with
      }
      starts.add(a.started());
      starts.add(a.claimed());
      starts.add(a.stopped());
      for (String sql : List.of("SELECT started FROM ops WHERE activation = ?",
          "SELECT started FROM stale_writes WHERE activation = ?")) {
        try (PreparedStatement q = c.prepareStatement(sql)) {
          q.setLong(1, a.id());
          try (ResultSet rs = q.executeQuery()) {
            while (rs.next()) {
              long v = rs.getLong(1);
              if (!rs.wasNull()) {
                starts.add(v);
              }
            }
          }
        }
      }
    } else {
      try (PreparedStatement q = c.prepareStatement("SELECT started FROM stale_writes WHERE activation = -1"
          + " AND account = ? AND pod = ? AND epoch = ? AND generation = ?")) {
        q.setString(1, a.account());
        q.setString(2, a.pod());
        q.setLong(3, a.epoch());
        q.setLong(4, a.generation());
        try (ResultSet rs = q.executeQuery()) {
          while (rs.next()) {
            starts.add(rs.getLong(1));
          }
        }
      }
    }
    for (long s : starts) {
      if (s >= from && s < k.at()) {
        return false; // it ran after the thaw before this started: this one's check came after the thaw
      }
    }
    return true;
  }

  private static Map<Long, Long> lastWrites(Connection c) throws SQLException {
    Map<Long, Long> out = new HashMap<>();
    for (String sql : List.of("SELECT activation, MAX(ended) FROM ops WHERE activation IS NOT NULL GROUP BY activation",
        "SELECT activation, MAX(ended) FROM stale_writes WHERE activation IS NOT NULL GROUP BY activation")) {
      try (Statement s = c.createStatement(); ResultSet rs = s.executeQuery(sql)) {
        while (rs.next()) {
          out.merge(rs.getLong(1), rs.getLong(2), Math::max);
        }
      }
    }
    return out;
  }
}
