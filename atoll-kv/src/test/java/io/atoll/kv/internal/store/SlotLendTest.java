package io.atoll.kv.internal.store;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.charset.StandardCharsets;
import org.junit.jupiter.api.Test;

/** A batch lent to a return: what is sent again when it is answered again. */
class SlotLendTest {
  private static Key key(String s) {
    return new Key(s.getBytes(StandardCharsets.UTF_8));
  }

  @Test
  void aKeyThatExpiredWhileLentIsNotSentAgain() {
    Slot slot = new SlotStore().slot(5);
    long now = 1_000;
    Entry brief = new Entry("v".getBytes(StandardCharsets.UTF_8));
    slot.put(key("brief"), brief);
    slot.expire(key("brief"), brief, now + 10);
    slot.put(key("lasting"), new Entry("w".getBytes(StandardCharsets.UTF_8)));
    assertThat(slot.lend(now, 10, 7)).isEqualTo(2);
    assertThat(slot.lentEntries(now + 5)).containsOnlyKeys(key("brief"), key("lasting"));
    assertThat(slot.lentEntries(now + 10)).as("brief expired while lent").containsOnlyKeys(key("lasting"));
    assertThat(slot.lentBatch()).isEqualTo(7);
  }
}
