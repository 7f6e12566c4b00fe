package io.atoll.server.demo;

import static org.assertj.core.api.Assertions.assertThat;

import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.OptionalLong;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * The activation log's classification on hand-written histories in a real (in-memory) H2
 * database: times are microseconds, {@code seq} is the account row's order.
 */
class ActivationLogTest {

  static final AtomicInteger DBS = new AtomicInteger();
  static final String POD_A = "127.0.0.1:1#a";
  static final String POD_B = "127.0.0.1:2#b";
  String url;

  @BeforeEach
  void schema() throws SQLException {
    url = "jdbc:h2:mem:activations-" + DBS.incrementAndGet() + ";DB_CLOSE_DELAY=-1";
    AccountDb.createSchema(url);
  }

  private void sql(String s) throws SQLException {
    try (Connection c = DriverManager.getConnection(url, "sa", ""); Statement st = c.createStatement()) {
      st.execute(s);
    }
  }

  /** An activation of account 'a': its factory started at {@code started}, claimed at row position {@code seq}. */
  private void activation(long id, String pod, long epoch, long generation, long started, long claimed, long seq,
      Long ended) throws SQLException {
    sql("INSERT INTO activations (id, account, pod, shard, epoch, generation, started, claimed, claim_seq, ended)"
        + " VALUES (" + id + ", 'a', '" + pod + "', 1, " + epoch + ", " + generation + ", " + started + ", " + claimed
        + ", " + seq + ", " + ended + ")");
  }

  /** A deposit of activation {@code activation} applied at row position {@code seq}. */
  private void applied(long op, long activation, long started, long ended, long seq) throws SQLException {
    sql("INSERT INTO ops (op_id, account, amount, epoch, pod, activation, started, ended, seq) VALUES (" + op
        + ", 'a', 1, 1, 'p', " + activation + ", " + started + ", " + ended + ", " + seq + ")");
  }

  private void refused(long activation, String pod, long epoch, long started, long ended) throws SQLException {
    sql("INSERT INTO stale_writes (account, pod, epoch, generation, newer_epoch, what, activation, started, ended)"
        + " VALUES ('a', '" + pod + "', " + epoch + ", 0, 9, 'deposit', " + activation + ", " + started + ", " + ended
        + ")");
  }

  private void refusedClaim(String pod, long epoch, long started) throws SQLException {
    sql("INSERT INTO stale_writes (account, pod, epoch, generation, newer_epoch, what, activation, started, ended)"
        + " VALUES ('a', '" + pod + "', " + epoch + ", 0, 9, 'activate', -1, " + started + ", " + (started + 5) + ")");
  }

  private ActivationLog.Result check() throws SQLException {
    return ActivationLog.check(url, ActivationLog.Freezes.NONE);
  }

  /** Pod A's process frozen from {@code from} to {@code to}. */
  private static ActivationLog.Freezes podAFrozen(long from, long to) {
    return (pod, frozenBefore, thawedBy) -> pod.equals(POD_A) && from < frozenBefore && to <= thawedBy
        ? OptionalLong.of(to) : OptionalLong.empty();
  }

  @Test
  void activationsOneAfterTheOtherFindNothing() throws SQLException {
    activation(1, POD_A, 1, 0, 100, 110, 1, 300L);
    applied(1, 1, 150, 200, 2);
    activation(2, POD_B, 2, 0, 400, 410, 3, null);
    applied(2, 2, 450, 500, 4);
    ActivationLog.Result r = check();
    assertThat(r.activations()).isEqualTo(2);
    assertThat(r.findings()).isEmpty();
    assertThat(r.fencedInFlight()).isZero();
  }

  @Test
  void theSameTokenOverlappingInTimeIsFlaggedWhateverTheDatabaseOrder() throws SQLException {
    activation(1, POD_A, 5, 0, 100, 110, 1, null);
    applied(1, 1, 150, 250, 2); // the old handler ends after the new activation started
    activation(2, POD_A, 5, 0, 200, 260, 3, null); // same pod, same token: the database cannot fence it
    applied(2, 2, 270, 280, 4);
    ActivationLog.Result r = check();
    assertThat(r.overlapping()).isEqualTo(1);
    ActivationLog.Finding f = r.findings().get(0);
    assertThat(f.kind()).isEqualTo(ActivationLog.Kind.SAME_TOKEN_OVERLAP);
    assertThat(f.older().id()).isEqualTo(1);
    assertThat(f.newer().id()).isEqualTo(2);
    assertThat(f.describe()).contains("account a").contains("0.1 ms before").contains("same token");
  }

  @Test
  void theSameTokenOneAfterTheOtherIsFine() throws SQLException {
    activation(1, POD_A, 5, 0, 100, 110, 1, null);
    applied(1, 1, 150, 190, 2);
    activation(2, POD_A, 5, 0, 200, 260, 3, null); // a successor that waited for the fenced activation to end
    assertThat(check().findings()).isEmpty();
  }

  @Test
  void aWriteAppliedAfterANewerClaimIsTwoLiveInstances() throws SQLException {
    activation(1, POD_A, 1, 0, 100, 110, 1, null);
    activation(2, POD_B, 2, 0, 200, 210, 2, null);
    applied(1, 1, 150, 400, 3); // started before the newer one, but the database applied it after its claim
    ActivationLog.Result r = check();
    assertThat(r.overlapping()).isEqualTo(1);
    assertThat(r.lateStarts()).isZero();
    assertThat(r.findings().get(0).kind()).isEqualTo(ActivationLog.Kind.APPLIED_AFTER_NEWER_CLAIM);
    assertThat(r.findings().get(0).describe()).contains("deposit op 1").contains("position 3")
        .contains("claimed it at position 2");
  }

  @Test
  void aThawedHandlerWhoseWriteTheDatabaseAppliedBeforeTheNewerClaimIsOneAfterTheOther() throws SQLException {
    // The failed 1,000-fault run: pod A frozen mid-handler, pod B's activation started (before its
    // claim), A thawed and its write committed, then B's claim. The wall clock overlaps; the
    // database's order does not.
    activation(1, POD_A, 1, 0, 100, 110, 1, null);
    applied(1, 1, 150, 900, 2);
    activation(2, POD_B, 2, 0, 500, 950, 3, null);
    ActivationLog.Result r = check();
    assertThat(r.findings()).isEmpty();
    assertThat(r.overlapping()).isZero();
  }

  @Test
  void aRefusedWriteOfAHandlerAlreadyRunningIsTheFencingWorking() throws SQLException {
    activation(1, POD_A, 1, 0, 100, 110, 1, null);
    activation(2, POD_B, 2, 0, 200, 210, 2, null);
    refused(1, POD_A, 1, 150, 250);
    ActivationLog.Result r = check();
    assertThat(r.findings()).isEmpty();
    assertThat(r.fencedInFlight()).isEqualTo(1);
  }

  @Test
  void aHandlerThatStartedAfterANewerActivationStartedIsADuplicateEvenIfTheTokenRefusedIt() throws SQLException {
    activation(1, POD_A, 1, 0, 100, 110, 1, null);
    activation(2, POD_B, 2, 0, 200, 210, 2, null);
    refused(1, POD_A, 1, 205, 230); // started after the newer activation did, before it claimed
    ActivationLog.Result r = check();
    assertThat(r.lateStarts()).isEqualTo(1);
    assertThat(r.excused()).isZero();
    assertThat(r.overlapping()).isZero();
    assertThat(r.fencedInFlight()).isZero();
    assertThat(r.findings().get(0).describe()).contains("a deposit (refused by the token)").contains("0.0 ms after")
        .contains("a duplicate activation");
  }

  @Test
  void anAppliedWriteWhoseHandlerStartedAfterTheNewerActivationStartedIsADuplicateToo() throws SQLException {
    activation(1, POD_A, 1, 0, 100, 110, 1, null);
    activation(2, POD_B, 2, 0, 200, 600, 3, null);
    applied(1, 1, 300, 320, 2); // before the newer claim in the database, but its lease had run out
    ActivationLog.Result r = check();
    assertThat(r.overlapping()).isZero();
    assertThat(r.lateStarts()).isEqualTo(1);
  }

  @Test
  void aLateHandlerInAProcessFrozenBetweenItsLeaseCheckAndItsFirstLineIsExcusedAndCountedApart()
      throws SQLException {
    activation(1, POD_A, 1, 0, 100, 110, 1, null);
    activation(2, POD_B, 2, 0, 200, 210, 2, null);
    refused(1, POD_A, 1, 320, 330); // the first thing it did after the thaw at 300
    ActivationLog.Result r = ActivationLog.check(url, podAFrozen(120, 300));
    assertThat(r.lateStarts()).isZero();
    assertThat(r.excused()).isEqualTo(1);
    assertThat(r.findings().get(0).describe()).contains("excused");
  }

  @Test
  void aSecondLateHandlerAfterTheThawIsNotExcused() throws SQLException {
    activation(1, POD_A, 1, 0, 100, 110, 1, null);
    activation(2, POD_B, 2, 0, 200, 210, 2, null);
    refused(1, POD_A, 1, 320, 330);
    refused(1, POD_A, 1, 340, 350); // its drain checked the lease again after the thaw: it had run out
    ActivationLog.Result r = ActivationLog.check(url, podAFrozen(120, 300));
    assertThat(r.excused()).isEqualTo(1);
    assertThat(r.lateStarts()).isEqualTo(1);
  }

  @Test
  void aFactoryThatReturnedAfterTheThawExcusesNoLateHandler() throws SQLException {
    // Frozen inside the factory (its claim's round trip): the lease is checked again after the
    // factory returns, after the thaw, so the first handler must not start.
    activation(1, POD_A, 1, 0, 100, 310, 1, null);
    activation(2, POD_B, 2, 0, 200, 400, 2, null);
    refused(1, POD_A, 1, 320, 330);
    ActivationLog.Result r = ActivationLog.check(url, podAFrozen(120, 300));
    assertThat(r.excused()).isZero();
    assertThat(r.lateStarts()).isEqualTo(1);
  }

  @Test
  void aFreezeThatBeganAfterTheNewerActivationStartedExcusesNothing() throws SQLException {
    activation(1, POD_A, 1, 0, 100, 110, 1, null);
    activation(2, POD_B, 2, 0, 200, 210, 2, null);
    refused(1, POD_A, 1, 320, 330);
    ActivationLog.Result r = ActivationLog.check(url, podAFrozen(250, 300)); // its lease had run out before 250
    assertThat(r.excused()).isZero();
    assertThat(r.lateStarts()).isEqualTo(1);
  }

  @Test
  void aSameTokenOverlapIsNeverExcusedByAFreeze() throws SQLException {
    activation(1, POD_A, 5, 0, 100, 110, 1, null);
    applied(1, 1, 150, 400, 2);
    activation(2, POD_A, 5, 0, 200, 410, 3, null);
    ActivationLog.Result r = ActivationLog.check(url, podAFrozen(120, 300));
    assertThat(r.overlapping()).isEqualTo(1);
    assertThat(r.excused()).isZero();
  }

  @Test
  void aRefusedClaimOrATerminationMessageStartedAfterANewerActivationAreLateStarts() throws SQLException {
    activation(1, POD_A, 1, 0, 100, 110, 1, 260L); // its termination message ran at 260
    activation(2, POD_B, 2, 0, 200, 210, 2, null);
    refusedClaim(POD_A, 1, 250); // a new activation at the old token, started after the newer one
    refusedClaim(POD_A, 1, 150); // one that started before: in flight
    ActivationLog.Result r = check();
    assertThat(r.lateStarts()).isEqualTo(2);
    assertThat(r.fencedInFlight()).isEqualTo(1);
    assertThat(r.findings()).extracting(ActivationLog.Finding::what)
        .containsExactlyInAnyOrder("its termination message", "a claim (refused by the token)");
  }

  @Test
  void aNewerGenerationAtTheSameEpochOutranksTheOlderOne() throws SQLException {
    activation(1, POD_A, 3, 1, 100, 110, 1, null);
    activation(2, POD_A, 3, 2, 200, 210, 2, null); // the same pod after a lapse of its lease
    applied(1, 1, 250, 260, 3);
    ActivationLog.Result r = check();
    assertThat(r.overlapping()).isEqualTo(1);
    assertThat(r.lateStarts()).isEqualTo(1);
  }

  @Test
  void claimsOutOfTokenOrderAreFlagged() throws SQLException {
    activation(1, POD_A, 1, 0, 300, 310, 2, null);
    activation(2, POD_B, 2, 0, 100, 110, 1, null);
    ActivationLog.Result r = check();
    assertThat(r.findings()).extracting(ActivationLog.Finding::kind)
        .contains(ActivationLog.Kind.APPLIED_AFTER_NEWER_CLAIM, ActivationLog.Kind.LATE_START);
  }

  @Test
  void onlyActivationsOfTheSameAccountAreCompared() throws SQLException {
    activation(1, POD_A, 1, 0, 100, 110, 1, null);
    applied(1, 1, 950, 1_000, 2);
    sql("INSERT INTO activations (id, account, pod, shard, epoch, generation, started, claimed, claim_seq)"
        + " VALUES (3, 'b', 'x', 1, 9, 0, 500, 510, 1)");
    ActivationLog.Result r = check();
    assertThat(r.activations()).isEqualTo(2);
    assertThat(r.findings()).isEmpty();
    activation(2, POD_B, 2, 0, 900, 910, 3, null);
    assertThat(check().lateStarts()).isEqualTo(1);
  }
}
