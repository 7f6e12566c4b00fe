package io.atoll.server.chaos;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.OptionalLong;
import org.junit.jupiter.api.Test;

/** Which freeze of a pod excuses a late handler: one that began before, and ended by, the given instants. */
class FreezeLogTest {

  @Test
  void theLastThawOfAFreezeThatBeganBeforeAndEndedByIsTheOneThatCounts() {
    FreezeLog log = new FreezeLog();
    log.frozen("127.0.0.1:7", 100, 200);
    log.frozen("127.0.0.1:7", 300, 400);
    log.frozen("127.0.0.1:8", 350, 390);
    assertThat(log.thawed("127.0.0.1:7#3", 350, 450)).isEqualTo(OptionalLong.of(400));
    assertThat(log.thawed("127.0.0.1:7#3", 250, 450)).as("the second began after").isEqualTo(OptionalLong.of(200));
    assertThat(log.thawed("127.0.0.1:7#3", 350, 399)).as("the second had not ended").isEqualTo(OptionalLong.of(200));
    assertThat(log.thawed("127.0.0.1:7#3", 100, 450)).as("none began before 100").isEmpty();
    assertThat(log.thawed("127.0.0.1:9#1", 1_000, 1_000)).as("another pod").isEmpty();
  }
}
