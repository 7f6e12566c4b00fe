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
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class FileAssignmentStoreTest extends AssignmentStoreContract {

  @TempDir
  Path dir;

  @Override
  protected AssignmentStore openFresh() {
    return FileAssignmentStore.open(dir.resolve("data"));
  }

  @Override
  protected AssignmentStore reopen(AssignmentStore s) {
    s.close();
    return FileAssignmentStore.open(dir.resolve("data"));
  }

  @Test
  void aSecondOpenOfTheSameDirectoryIsRefusedWithTheLockNamed() {
    assertThatThrownBy(() -> FileAssignmentStore.open(dir.resolve("data")))
        .isInstanceOf(StoreException.class)
        .hasMessageContaining("in use by another process")
        .hasMessageContaining("lock");
  }

  @Test
  void aSaveInterruptedBeforeItsRenameLeavesTheOldState() throws Exception {
    store.save("old".getBytes(StandardCharsets.UTF_8), 0);
    // A crash after writing the temporary file but before the rename leaves it behind.
    Files.write(dir.resolve("data").resolve(FileAssignmentStore.TEMP), new byte[] {1, 2, 3});
    store = reopen(store);
    assertThat(store.load().orElseThrow().data()).isEqualTo("old".getBytes(StandardCharsets.UTF_8));
    assertThat(dir.resolve("data").resolve(FileAssignmentStore.TEMP)).doesNotExist();
  }

  @Test
  void aDamagedStateFileIsReportedNotHalfRead() throws Exception {
    store.save("good state".getBytes(StandardCharsets.UTF_8), 0);
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
    store.save("good state".getBytes(StandardCharsets.UTF_8), 0);
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
    store.save("v1".getBytes(StandardCharsets.UTF_8), 0);
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
    assertThatThrownBy(() -> store.save("v1".getBytes(StandardCharsets.UTF_8), 0))
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
    store.save("v1".getBytes(StandardCharsets.UTF_8), 0);
    store.save("v2".getBytes(StandardCharsets.UTF_8), 1);
    assertThat(versionsSeenAtSync).containsExactly(1L, 2L);
  }
}
