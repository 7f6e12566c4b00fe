package io.atoll.manager;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.atoll.core.ClusterConfig;
import io.atoll.core.Pod;
import io.atoll.core.PodAddress;
import io.atoll.core.PodId;
import io.atoll.core.PodVersion;
import io.atoll.core.spi.StoreConflictException;
import io.atoll.core.spi.StoreException;
import io.atoll.manager.round.Rounds;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.function.UnaryOperator;
import org.junit.jupiter.api.Test;

/** The write-ahead journal and terms, on a virtual clock against the in-memory store. */
class JournalTest {

  static final Pod A = new Pod(new PodId(new PodAddress("127.0.0.1", 7001), 1), PodVersion.of("1"));
  static final Pod B = new Pod(new PodId(new PodAddress("127.0.0.1", 7002), 1), PodVersion.of("1"));

  final VirtualTime vt = new VirtualTime();
  final VirtualTime.SimLoop loop = vt.newLoop();
  final MemoryStore store = new MemoryStore();
  final List<ClusterConfig> installed = new ArrayList<>();
  final List<StoreConflictException> deposed = new ArrayList<>();

  Journal journal(int shards) {
    return new Journal(store, vt.executor(Duration.ofMillis(5).toNanos(), () -> true), loop, vt, shards, installed::add,
        deposed::add);
  }

  CompletableFuture<ClusterConfig> transition(Journal j, UnaryOperator<ClusterConfig> change) {
    return loop.callAsLoop(() -> j.transition(change));
  }

  ManagerState stored() {
    return ManagerState.decode(store.load().orElseThrow().data());
  }

  @Test
  void aFirstStartTakesTermOneAndSavesAnEmptyConfig() {
    Journal j = journal(4);
    ClusterConfig c = loop.callAsLoop(() -> j.recover(Rounds::reassert));
    assertThat(j.term()).isEqualTo(1);
    assertThat(c).isEqualTo(ClusterConfig.empty(4));
    assertThat(stored()).isEqualTo(new ManagerState(1, c));
    assertThat(store.version()).isEqualTo(1);
    assertThat(j.storeLeaseNanos()).as("the store lease taken at the start").isEqualTo(Duration.ofSeconds(10).toNanos());
  }

  @Test
  void eachStartTakesTheNextTermAndSavesItsStartOfTermBeforeAnythingElse() {
    Journal first = journal(2);
    loop.callAsLoop(() -> first.recover(UnaryOperator.identity()));
    transition(first, c -> Rounds.join(c, A));
    vt.advance(Duration.ofMillis(10));
    Journal second = journal(2);
    ClusterConfig c = loop.callAsLoop(() -> second.recover(x -> Rounds.join(x, B)));
    assertThat(second.term()).isEqualTo(2);
    assertThat(c.isActive(A.id())).isTrue();
    assertThat(c.isActive(B.id())).isTrue();
    assertThat(stored()).isEqualTo(new ManagerState(2, c));
    assertThat(loop.callAsLoop(second::config)).isSameAs(c);
  }

  @Test
  void aStoreOfAnotherSizeIsRefusedNamingBothSizes() {
    Journal j = journal(3);
    loop.callAsLoop(() -> j.recover(UnaryOperator.identity()));
    Journal other = journal(5);
    assertThatThrownBy(() -> loop.callAsLoop(() -> other.recover(UnaryOperator.identity())))
        .isInstanceOf(StoreException.class).hasMessageContaining("holds 3 shards").hasMessageContaining("set to 5");
  }

  @Test
  void aStartWhoseSaveFailsTakesNoTerm() {
    Journal j = journal(1);
    store.failSaves(1, MemoryStore.Failure.BEFORE_WRITE);
    assertThatThrownBy(() -> loop.callAsLoop(() -> j.recover(UnaryOperator.identity()))).isInstanceOf(StoreException.class);
    assertThat(j.term()).isZero();
    assertThat(store.load()).isEmpty();
  }

  @Test
  void aTransitionIsInstalledOnlyAfterItsSave() {
    Journal j = journal(2);
    loop.callAsLoop(() -> j.recover(UnaryOperator.identity()));
    CompletableFuture<ClusterConfig> f = transition(j, c -> Rounds.join(c, A));
    vt.advance(Duration.ofMillis(1));
    assertThat(f).isNotDone();
    assertThat(loop.callAsLoop(j::config).isActive(A.id())).isFalse();
    assertThat(installed).isEmpty();
    vt.advance(Duration.ofMillis(10));
    assertThat(f.join().isActive(A.id())).isTrue();
    assertThat(installed).containsExactly(f.join());
    assertThat(stored().config()).isEqualTo(f.join());
    assertThat(stored().term()).isEqualTo(1);
  }

  @Test
  void transitionsRunOneAfterAnotherEachFromTheConfigBeforeIt() {
    Journal j = journal(2);
    loop.callAsLoop(() -> j.recover(UnaryOperator.identity()));
    CompletableFuture<ClusterConfig> first = transition(j, c -> Rounds.join(c, A));
    CompletableFuture<ClusterConfig> second = transition(j, c -> {
      assertThat(c.isActive(A.id())).as("computed after the first is installed").isTrue();
      return Rounds.join(c, B);
    });
    vt.advance(Duration.ofMillis(50));
    assertThat(first.join().isActive(B.id())).isFalse();
    assertThat(second.join().isActive(A.id()) && second.join().isActive(B.id())).isTrue();
    assertThat(store.version()).isEqualTo(3);
  }

  @Test
  void aTransitionThatChangesNothingSavesNothing() {
    Journal j = journal(2);
    ClusterConfig start = loop.callAsLoop(() -> j.recover(UnaryOperator.identity()));
    CompletableFuture<ClusterConfig> f = transition(j, c -> c);
    vt.advance(Duration.ofMillis(10));
    assertThat(f.join()).isSameAs(start);
    assertThat(store.version()).isEqualTo(1);
    assertThat(installed).isEmpty();
  }

  @Test
  void aChangeThatThrowsFailsOnlyItsOwnTransition() {
    Journal j = journal(2);
    loop.callAsLoop(() -> j.recover(UnaryOperator.identity()));
    CompletableFuture<ClusterConfig> bad = transition(j, c -> {
      throw new IllegalArgumentException("boom");
    });
    CompletableFuture<ClusterConfig> good = transition(j, c -> Rounds.join(c, A));
    vt.advance(Duration.ofMillis(20));
    assertThat(bad).isCompletedExceptionally();
    assertThat(good.join().isActive(A.id())).isTrue();
  }

  @Test
  void aSaveThatFailsBeforeWritingInstallsNothingAndTheNextOneSucceeds() {
    Journal j = journal(2);
    ClusterConfig start = loop.callAsLoop(() -> j.recover(UnaryOperator.identity()));
    store.failSaves(1, MemoryStore.Failure.BEFORE_WRITE);
    CompletableFuture<ClusterConfig> f = transition(j, c -> Rounds.join(c, A));
    vt.advance(Duration.ofMillis(10));
    assertThat(f).isCompletedExceptionally();
    assertThat(f.handle((v, e) -> e).join()).as("the store's own exception, unwrapped")
        .isExactlyInstanceOf(io.atoll.core.spi.StoreException.class).hasMessageContaining("save failed (injected)");
    assertThat(loop.callAsLoop(j::config)).isSameAs(start);
    assertThat(installed).isEmpty();
    CompletableFuture<ClusterConfig> g = transition(j, c -> Rounds.join(c, B));
    vt.advance(Duration.ofMillis(10));
    assertThat(g.join().isActive(B.id())).isTrue();
    assertThat(stored().config()).isEqualTo(g.join());
  }

  @Test
  void aSaveThatWroteButFailedIsInstalledAndTheNextOneSucceeds() {
    Journal j = journal(2);
    loop.callAsLoop(() -> j.recover(UnaryOperator.identity()));
    store.failSaves(1, MemoryStore.Failure.AFTER_WRITE);
    CompletableFuture<ClusterConfig> f = transition(j, c -> Rounds.join(c, A));
    vt.advance(Duration.ofMillis(10));
    assertThat(f).isCompletedExceptionally();
    assertThat(loop.callAsLoop(j::config).isActive(A.id())).isTrue();
    assertThat(installed).hasSize(1);
    CompletableFuture<ClusterConfig> g = transition(j, c -> Rounds.join(c, B));
    vt.advance(Duration.ofMillis(10));
    assertThat(g.join().isActive(A.id()) && g.join().isActive(B.id())).isTrue();
    assertThat(deposed).isEmpty();
  }

  @Test
  void aFailedSaveWhoseStoreCannotBeReadLeavesTheConfigAlone() {
    Journal j = journal(2);
    ClusterConfig start = loop.callAsLoop(() -> j.recover(UnaryOperator.identity()));
    store.failSaves(1, MemoryStore.Failure.BEFORE_WRITE);
    store.failLoads(1);
    CompletableFuture<ClusterConfig> f = transition(j, c -> Rounds.join(c, A));
    vt.advance(Duration.ofMillis(10));
    assertThat(f).isCompletedExceptionally();
    assertThat(loop.callAsLoop(j::config)).isSameAs(start);
    assertThat(deposed).isEmpty();
    assertThat(j.closed()).isFalse();
  }

  @Test
  void aSaveOfThisTermAppliedAfterItsErrorIsInstalledAtTheNextConflictNotTakenForADeposition() {
    Journal j = journal(2);
    ClusterConfig start = loop.callAsLoop(() -> j.recover(UnaryOperator.identity()));
    store.failSaves(1, MemoryStore.Failure.LATER);
    store.failLoads(1); // the read-back after it fails too: the store is still down
    CompletableFuture<ClusterConfig> f = transition(j, c -> Rounds.join(c, A));
    vt.advance(Duration.ofMillis(20));
    assertThat(f).isCompletedExceptionally();
    assertThat(loop.callAsLoop(j::config)).isSameAs(start);
    store.applyLateSaves(); // the store resumes and runs the save it was sent
    CompletableFuture<ClusterConfig> g = transition(j, c -> Rounds.join(c, B));
    vt.advance(Duration.ofMillis(20));
    assertThat(g).as("computed from the config before the late save").isCompletedExceptionally();
    assertThat(deposed).as("only this manager writes under its term").isEmpty();
    assertThat(j.closed()).isFalse();
    assertThat(loop.callAsLoop(j::config).isActive(A.id())).as("the late save, read back and installed").isTrue();
    assertThat(installed).hasSize(1);
    CompletableFuture<ClusterConfig> h = transition(j, c -> Rounds.join(c, B));
    vt.advance(Duration.ofMillis(20));
    assertThat(h.join().isActive(A.id()) && h.join().isActive(B.id())).isTrue();
    assertThat(stored().config()).isEqualTo(h.join());
    assertThat(stored().term()).isEqualTo(1);
  }

  @Test
  void aStateOfThisTermThatThisManagerDidNotWriteDeposesItAndIsNotInstalled() {
    Journal j = journal(2);
    ClusterConfig start = loop.callAsLoop(() -> j.recover(UnaryOperator.identity()));
    // Another writer under the same term (a store whose term counter went back granted it twice).
    ClusterConfig foreign = Rounds.join(start, B);
    store.overwrite(new ManagerState(1, foreign).encode());
    CompletableFuture<ClusterConfig> f = transition(j, c -> Rounds.join(c, A));
    vt.advance(Duration.ofMillis(20));
    assertThat(f).isCompletedExceptionally();
    assertThat(deposed).hasSize(1);
    assertThat(j.closed()).isTrue();
    assertThat(loop.callAsLoop(j::config)).as("the foreign state is never installed").isSameAs(start);
    assertThat(installed).isEmpty();
  }

  @Test
  void aStoreThatLostItsStateDeposesTheManager() {
    Journal j = journal(2);
    loop.callAsLoop(() -> j.recover(UnaryOperator.identity()));
    CompletableFuture<ClusterConfig> f = transition(j, c -> Rounds.join(c, A));
    vt.advance(Duration.ofMillis(20));
    assertThat(f.join().isActive(A.id())).isTrue();
    store.wipe();
    CompletableFuture<ClusterConfig> g = transition(j, c -> Rounds.join(c, B));
    vt.advance(Duration.ofMillis(20));
    assertThat(g).isCompletedExceptionally();
    assertThat(deposed).hasSize(1);
    assertThat(loop.callAsLoop(j::config).isActive(B.id())).isFalse();
  }

  @Test
  void aManagerWhoseSaveMeetsANewerWriterIsDeposedOnceAndWritesNothingMore() {
    Journal old = journal(2);
    loop.callAsLoop(() -> old.recover(UnaryOperator.identity()));
    Journal newer = journal(2);
    loop.callAsLoop(() -> newer.recover(UnaryOperator.identity()));
    CompletableFuture<ClusterConfig> f = transition(old, c -> Rounds.join(c, A));
    vt.advance(Duration.ofMillis(10));
    assertThat(f).isCompletedExceptionally();
    assertThat(deposed).hasSize(1);
    assertThat(deposed.get(0)).as("the store said the term is stale: no read-back needed")
        .isInstanceOf(io.atoll.core.spi.StaleTermException.class);
    assertThat(old.closed()).isTrue();
    assertThat((boolean) loop.callAsLoop(() -> old.leads(vt.nanoTime()))).as("a deposed term grants nothing").isFalse();
    CompletableFuture<ClusterConfig> g = transition(old, c -> Rounds.join(c, B));
    vt.advance(Duration.ofMillis(10));
    assertThatThrownBy(g::join).hasMessageContaining("closed");
    assertThat(deposed).hasSize(1);
    assertThat(stored().term()).isEqualTo(2);
    assertThat(stored().config().pods()).isEmpty();
  }

  @Test
  void aFailedSaveThatFindsANewerTermInTheStoreIsDeposed() {
    Journal j = journal(2);
    loop.callAsLoop(() -> j.recover(UnaryOperator.identity()));
    store.overwrite(new ManagerState(5, ClusterConfig.empty(2)).encode());
    store.failSaves(1, MemoryStore.Failure.BEFORE_WRITE);
    transition(j, c -> Rounds.join(c, A));
    vt.advance(Duration.ofMillis(10));
    assertThat(deposed).hasSize(1);
    assertThat(j.closed()).isTrue();
  }

  @Test
  void aClosedJournalRefusesTransitions() {
    Journal j = journal(2);
    loop.callAsLoop(() -> j.recover(UnaryOperator.identity()));
    assertThat((boolean) loop.callAsLoop(() -> j.leads(vt.nanoTime()))).isTrue();
    loop.runAsLoop(j::close);
    assertThat((boolean) loop.callAsLoop(() -> j.leads(vt.nanoTime()))).as("a closed term grants nothing").isFalse();
    CompletableFuture<ClusterConfig> f = transition(j, c -> Rounds.join(c, A));
    vt.advance(Duration.ofMillis(10));
    assertThat(f).isCompletedExceptionally();
    assertThat(store.version()).isEqualTo(1);
    assertThat(deposed).isEmpty();
  }

  @Test
  void loopOnlyMethodsRefuseOtherCallers() {
    Journal j = journal(2);
    loop.callAsLoop(() -> j.recover(UnaryOperator.identity()));
    assertThatThrownBy(j::config).isInstanceOf(IllegalStateException.class).hasMessageContaining("loop");
    assertThatThrownBy(() -> j.transition(c -> c)).isInstanceOf(IllegalStateException.class);
    assertThatThrownBy(() -> journal(2).recover(UnaryOperator.identity())).isInstanceOf(IllegalStateException.class);
    assertThat(store.version()).as("a start off the loop took no term and saved nothing").isEqualTo(1);
    assertThat(stored().term()).isEqualTo(1);
    assertThatThrownBy(j::keepOwnPromise).isInstanceOf(IllegalStateException.class);
    assertThatThrownBy(() -> j.wasPruned(A.id())).isInstanceOf(IllegalStateException.class);
    assertThat(j.term()).isEqualTo(1); // any thread
  }

  @Test
  void aStartThatFindsAnotherSigningKeyInTheStoreTakesNoTermAndReleasesTheLease() {
    store.overwrite(new ManagerState(0, ClusterConfig.empty(2), Duration.ZERO, Duration.ZERO, PrunedPods.NONE,
        "another key").encode());
    Journal j = journal(2);
    j.keepSigningKey("this manager's key");
    assertThatThrownBy(() -> loop.callAsLoop(() -> j.recover(UnaryOperator.identity())))
        .isInstanceOf(io.atoll.core.spi.StoreException.class)
        .hasMessageContaining("another manager stored the cluster's signing key during this start");
    assertThat(store.leader()).as("the lease is released for a standby").isEmpty();
    Journal same = journal(2);
    same.keepSigningKey("another key");
    loop.callAsLoop(() -> same.recover(UnaryOperator.identity()));
    assertThat(stored().signingKey()).isEqualTo("another key");
  }
}
