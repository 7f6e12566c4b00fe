package io.atoll.store.file;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.atoll.core.spi.AssignmentStore;
import io.atoll.core.spi.AssignmentStoreContract;
import io.atoll.core.spi.StoreException;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class FileAssignmentStoreTest extends AssignmentStoreContract {

  @TempDir
  Path dir;

  @Override
  protected boolean toldOfLeaseChanges() {
    return true;
  }

  @Override
  protected AssignmentStore openFresh() {
    return FileAssignmentStore.open(dir.resolve("data"));
  }

  @Override
  protected AssignmentStore openAnother(AssignmentStore s) {
    return FileAssignmentStore.open(((FileAssignmentStore) s).directory());
  }

  /** No server: the files are the store. */
  @Override
  protected void restartServer() {}

  private AssignmentStore reopen(AssignmentStore s) {
    s.close();
    return FileAssignmentStore.open(dir.resolve("data"));
  }

  private static long leaderWaiters() {
    return Thread.getAllStackTraces().keySet().stream()
        .filter(t -> t.getName().equals("atoll-file-store-leader-lock") && t.isAlive()).count();
  }

  @Test
  void closingAHandleStopsItsLeaderWatchesWaiterWhileAnotherHandleLeads() throws Exception {
    long before = leaderWaiters();
    store.tryAcquire("m1", Duration.ofMinutes(5)).orElseThrow();
    AssignmentStore other = another();
    List<java.util.Optional<AssignmentStore.Leader>> told = new java.util.concurrent.CopyOnWriteArrayList<>();
    other.watchLeader(Duration.ofMillis(20), new AssignmentStore.LeaderListener() {
      @Override
      public void leader(java.util.Optional<AssignmentStore.Leader> leader) {
        told.add(leader);
      }

      @Override
      public void unreachable(StoreException e) {}
    }); // not closed by the caller: the handle's close must stop it
    org.awaitility.Awaitility.await().atMost(Duration.ofSeconds(10)).until(() -> !told.isEmpty());
    assertThat(leaderWaiters()).isEqualTo(before + 1); // waiting for m1 to go
    other.close();
    // it used to wait on until the leader went (here: five minutes)
    org.awaitility.Awaitility.await().atMost(Duration.ofSeconds(5)).until(() -> leaderWaiters() == before);
  }

  @Test
  void aClosedHandleReleasesItsLeaseAtOnce() throws Exception {
    AssignmentStore other = another();
    store.tryAcquire("m1", java.time.Duration.ofMinutes(5)).orElseThrow();
    assertThat(other.tryAcquire("m2", java.time.Duration.ofMinutes(5))).isEmpty();
    store.close();
    store = null;
    assertThat(other.tryAcquire("m2", java.time.Duration.ofMinutes(5))).isPresent();
  }

  @Test
  void aSecondHandleInThisProcessLeavesTheLeadersLockAlone() throws Exception {
    AssignmentStore other = another();
    AssignmentStore.Lease lease = store.tryAcquire("m1", Duration.ofMinutes(5)).orElseThrow();
    // Each of these opened and closed a channel of leader.lock, and closing any channel of a file
    // drops every OS (fcntl) lock the process holds on it, the leader's too.
    assertThat(other.leader()).contains(new AssignmentStore.Leader("m1", lease.term()));
    assertThat(other.tryAcquire("m2", Duration.ofMinutes(5))).isEmpty();
    assertThat(other.renew(new AssignmentStore.Lease("m2", lease.term(), Duration.ofMinutes(5)))).isFalse();
    assertThat(other.leader()).contains(new AssignmentStore.Leader("m1", lease.term()));
    assertThat(lockableByAnotherProcess(((FileAssignmentStore) store).directory().resolve("leader.lock")))
        .as("another process may take leader.lock while m1 leads").isFalse();
    assertThat(store.renew(lease)).isTrue();
    store.release(lease);
    assertThat(other.leader()).isEmpty();
    assertThat(lockableByAnotherProcess(((FileAssignmentStore) store).directory().resolve("leader.lock"))).isTrue();
    assertThat(other.tryAcquire("m2", Duration.ofMinutes(5))).isPresent();
    assertThat(store.leader().orElseThrow().holder()).isEqualTo("m2");
  }

  private Path probeSource;

  /** Whether a new JVM can lock {@code file} at once (what a manager in another process tries). */
  private boolean lockableByAnotherProcess(Path file) throws Exception {
    if (probeSource == null) {
      probeSource = dir.resolve("LockProbe.java");
      Files.writeString(probeSource, """
          import java.nio.channels.FileChannel;
          import java.nio.file.Path;
import java.time.Duration;
          import java.nio.file.StandardOpenOption;
          public class LockProbe {
            public static void main(String[] a) throws Exception {
              try (FileChannel ch = FileChannel.open(Path.of(a[0]), StandardOpenOption.WRITE)) {
                System.exit(ch.tryLock() != null ? 0 : 1);
              }
            }
          }
          """);
    }
    String java = ProcessHandle.current().info().command().orElse("java");
    Process p = new ProcessBuilder(java, "-Xmx32m", probeSource.toString(), file.toString()).inheritIO().start();
    if (!p.waitFor(60, TimeUnit.SECONDS)) {
      p.destroyForcibly();
      throw new AssertionError("the lock probe did not finish in 60 s");
    }
    assertThat(p.exitValue()).as("the probe's exit code (0 or 1)").isIn(0, 1);
    return p.exitValue() == 0;
  }

  @Test
  void aStateFileOfFormat1IsReadWithTermZero() throws Exception {
    java.nio.ByteBuffer b = java.nio.ByteBuffer.allocate(4 + 1 + 8 + 4 + 2 + 4);
    b.put(new byte[] {'A', 'T', 'L', 'S'}).put((byte) 1).putLong(3).putInt(2).put(new byte[] {7, 8});
    java.util.zip.CRC32C crc = new java.util.zip.CRC32C();
    crc.update(b.array(), 0, b.position());
    b.putInt((int) crc.getValue());
    Files.write(dir.resolve("data").resolve(FileAssignmentStore.STATE), b.array());
    AssignmentStore.Stored s = store.load().orElseThrow();
    assertThat(s.version()).isEqualTo(3);
    assertThat(s.term()).isZero();
    assertThat(s.data()).containsExactly(7, 8);
    assertThat(store.save(new byte[] {9}, 0, 3)).isEqualTo(4);
  }

  @Test
  void aDamagedTermFileIsReported() throws Exception {
    store.tryAcquire("m1", java.time.Duration.ofMinutes(5)).orElseThrow();
    Files.write(dir.resolve("data").resolve(FileAssignmentStore.TERM), new byte[] {1, 2, 3});
    assertThatThrownBy(() -> store.save(new byte[0], 1, 0)).isInstanceOf(StoreException.class)
        .hasMessageContaining("damaged term file");
  }

  @Test
  void aSaveInterruptedBeforeItsRenameLeavesTheOldState() throws Exception {
    store.save("old".getBytes(StandardCharsets.UTF_8), 0, 0);
    // A crash after writing the temporary file but before the rename leaves it behind.
    Files.write(dir.resolve("data").resolve(FileAssignmentStore.TEMP), new byte[] {1, 2, 3});
    store = reopen(store);
    assertThat(store.load().orElseThrow().data()).isEqualTo("old".getBytes(StandardCharsets.UTF_8));
    assertThat(dir.resolve("data").resolve(FileAssignmentStore.TEMP)).doesNotExist();
  }

  @Test
  void aDamagedStateFileIsReportedNotHalfRead() throws Exception {
    store.save("good state".getBytes(StandardCharsets.UTF_8), 0, 0);
    store.close();
    Path state = dir.resolve("data").resolve(FileAssignmentStore.STATE);
    byte[] all = Files.readAllBytes(state);
    all[all.length - 6] ^= 0x5A; // flip bits inside the data
    Files.write(state, all);
    assertThatThrownBy(() -> FileAssignmentStore.open(dir.resolve("data")))
        .isInstanceOf(StoreException.class)
        .hasMessageContaining("damaged state file")
        .hasMessageContaining("checksum");
    store = null;
  }

  @Test
  void aTruncatedStateFileIsReported() throws Exception {
    store.save("good state".getBytes(StandardCharsets.UTF_8), 0, 0);
    store.close();
    store = null;
    Path state = dir.resolve("data").resolve(FileAssignmentStore.STATE);
    byte[] all = Files.readAllBytes(state);
    Files.write(state, java.util.Arrays.copyOf(all, all.length - 3));
    assertThatThrownBy(() -> FileAssignmentStore.read(dir.resolve("data")))
        .isInstanceOf(StoreException.class)
        .hasMessageContaining("damaged state file");
  }

  @Test
  void readingWithoutTheLockSeesTheLastSave() {
    store.save("v1".getBytes(StandardCharsets.UTF_8), 0, 0);
    assertThat(FileAssignmentStore.read(dir.resolve("data")).orElseThrow().version()).isEqualTo(1);
  }

  @Test
  void aSaveWhoseDirectorySyncFailsReportsFailureNotDurability() {
    // Regression: a failed directory fsync used to be swallowed, and save returned a version a
    // crash could still undo.
    store.close();
    store = FileAssignmentStore.open(dir.resolve("other"), d -> {
      throw new IOException("injected: EIO");
    });
    assertThatThrownBy(() -> store.save("v1".getBytes(StandardCharsets.UTF_8), 0, 0))
        .isInstanceOf(StoreException.class)
        .hasMessageContaining("version 1 is not durable")
        .hasMessageContaining("injected: EIO")
        .hasCauseInstanceOf(IOException.class);
    // The outcome was ambiguous: the rename happened, so the file is the truth after a load.
    assertThat(store.load().orElseThrow().version()).isEqualTo(1);
  }

  @Test
  void theDirectoryIsSyncedOnceForEachSaveAfterItsRename() {
    store.close();
    Path other = dir.resolve("other");
    List<Long> versionsSeenAtSync = new ArrayList<>();
    store = FileAssignmentStore.open(other,
        d -> versionsSeenAtSync.add(FileAssignmentStore.read(d).orElseThrow().version()));
    store.save("v1".getBytes(StandardCharsets.UTF_8), 0, 0);
    store.save("v2".getBytes(StandardCharsets.UTF_8), 0, 1);
    assertThat(versionsSeenAtSync).containsExactly(1L, 2L);
  }
}
