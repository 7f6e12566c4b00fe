package io.atoll.core.slots;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.charset.StandardCharsets;
import org.junit.jupiter.api.Test;

class KeySlotsTest {

  @Test
  void crc16OfTheStandardCheckString() {
    byte[] data = "123456789".getBytes(StandardCharsets.US_ASCII);
    assertThat(KeySlots.crc16(data, 0, data.length)).isEqualTo(0x31C3);
  }

  @Test
  void slotsMatchRedis() {
    // Values Redis' CLUSTER KEYSLOT returns.
    assertThat(KeySlots.slotOf("foo")).isEqualTo(12182);
    assertThat(KeySlots.slotOf("bar")).isEqualTo(5061);
    assertThat(KeySlots.slotOf("")).isEqualTo(0);
  }

  @Test
  void emptyHashTagHashesTheWholeKey() {
    assertThat(KeySlots.slotOf("foo{}{bar}"))
        .isEqualTo(crcOf("foo{}{bar}"));
  }

  @Test
  void onlyTheFirstBraceOpensATag() {
    assertThat(KeySlots.slotOf("foo{{bar}}zap")).isEqualTo(crcOf("{bar"));
  }

  @Test
  void keysWithTheSameTagShareASlot() {
    assertThat(KeySlots.slotOf("{user1000}.following"))
        .isEqualTo(KeySlots.slotOf("{user1000}.followers"))
        .isEqualTo(crcOf("user1000"));
  }

  @Test
  void unclosedBraceHashesTheWholeKey() {
    assertThat(KeySlots.slotOf("foo{bar")).isEqualTo(crcOf("foo{bar"));
  }

  @Test
  void sliceOfALargerBufferHashesLikeTheKeyAlone() {
    byte[] buf = "xx{a}bcyy".getBytes(StandardCharsets.US_ASCII);
    assertThat(KeySlots.slotOf(buf, 2, 5)).isEqualTo(KeySlots.slotOf("{a}bc"));
  }

  @Test
  void aRangeMayEndExactlyAtTheEndOfTheArray() {
    byte[] key = "ab{c}".getBytes(java.nio.charset.StandardCharsets.UTF_8);
    assertThat(KeySlots.crc16(key, key.length, 0)).isEqualTo(0);
    assertThat(KeySlots.slotOf(key, key.length, 0)).isEqualTo(0);
    assertThat(KeySlots.slotOf(key, 2, 3)).isEqualTo(KeySlots.slotOf("c"));
  }

  @Test
  void aRangeOutsideTheArrayIsRefused() {
    byte[] key = new byte[5];
    int[][] bad = {{-1, 1}, {0, -1}, {1, 5}, {6, 0}, {5, 1}};
    for (int[] r : bad) {
      assertThatThrownBy(() -> KeySlots.crc16(key, r[0], r[1])).isInstanceOf(IndexOutOfBoundsException.class);
      assertThatThrownBy(() -> KeySlots.slotOf(key, r[0], r[1])).isInstanceOf(IndexOutOfBoundsException.class);
    }
  }

  private static int crcOf(String s) {
    byte[] b = s.getBytes(StandardCharsets.UTF_8);
    return KeySlots.crc16(b, 0, b.length) & 16383;
  }
}
