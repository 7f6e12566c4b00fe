package io.atoll.core.slots;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.charset.StandardCharsets;
import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.Combinators;
import net.jqwik.api.Example;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;
import net.jqwik.api.Tuple;

/**
 * The word-at-a-time {@link KeySlots} against plain references: a bit-by-bit CRC16/XMODEM and a
 * byte-by-byte reading of Redis' hash-tag rule.
 */
class KeySlotsProperties {

  /** CRC16/XMODEM one bit at a time, straight from its definition (poly 0x1021, init 0). */
  static int referenceCrc16(byte[] data, int offset, int length) {
    int crc = 0;
    for (int i = offset; i < offset + length; i++) {
      crc ^= (data[i] & 0xFF) << 8;
      for (int bit = 0; bit < 8; bit++) {
        crc = (crc & 0x8000) != 0 ? (crc << 1) ^ 0x1021 : crc << 1;
        crc &= 0xFFFF;
      }
    }
    return crc;
  }

  /** Redis' keyHashSlot, byte by byte. */
  static int referenceSlot(byte[] key, int offset, int length) {
    int end = offset + length;
    int open = -1;
    for (int i = offset; i < end; i++) {
      if (key[i] == '{') {
        open = i;
        break;
      }
    }
    if (open >= 0) {
      for (int close = open + 1; close < end; close++) {
        if (key[close] == '}') {
          if (close > open + 1) {
            return referenceCrc16(key, open + 1, close - open - 1) & 16383;
          }
          break;
        }
      }
    }
    return referenceCrc16(key, offset, length) & 16383;
  }

  /** A byte array and a slice of it: {@code [bytes, offset, length]}. */
  record Slice(byte[] bytes, int offset, int length) {}

  @Provide
  Arbitrary<byte[]> anyBytes() {
    return Arbitraries.bytes().array(byte[].class).ofMaxSize(100);
  }

  /**
   * Keys rich in braces: any byte, with '{' and '}' common, so tags open and close at every
   * offset relative to the 8-byte words, nest, come empty or unclosed.
   */
  @Provide
  Arbitrary<byte[]> braceKeys() {
    Arbitrary<Byte> b = Arbitraries.frequencyOf(
        Tuple.of(6, Arbitraries.bytes()),
        Tuple.of(6, Arbitraries.of((byte) 'a', (byte) 'z', (byte) '0', (byte) ':')),
        Tuple.of(1, Arbitraries.just((byte) '{')),
        Tuple.of(1, Arbitraries.just((byte) '}')));
    return b.array(byte[].class).ofMaxSize(60);
  }

  /** A plain key with one {tag} placed anywhere in it. */
  @Provide
  Arbitrary<byte[]> taggedKeys() {
    Arbitrary<String> text = Arbitraries.strings().withChars("abcxyz0123:-_./").ofMaxLength(40);
    return Combinators.combine(text, text, Arbitraries.integers().between(0, 40)).as((key, tag, at) -> {
      int cut = Math.min(at, key.length());
      return (key.substring(0, cut) + "{" + tag + "}" + key.substring(cut)).getBytes(StandardCharsets.UTF_8);
    });
  }

  @Provide
  Arbitrary<Slice> slices() {
    return braceKeys().flatMap(bytes -> Arbitraries.integers().between(0, bytes.length).flatMap(offset ->
        Arbitraries.integers().between(0, bytes.length - offset).map(length -> new Slice(bytes, offset, length))));
  }

  @Property
  void crcMatchesTheBitwiseReference(@ForAll("anyBytes") byte[] data) {
    assertThat(KeySlots.crc16(data, 0, data.length)).isEqualTo(referenceCrc16(data, 0, data.length));
  }

  @Property
  void crcOfASliceMatchesTheBitwiseReference(@ForAll("slices") Slice s) {
    assertThat(KeySlots.crc16(s.bytes(), s.offset(), s.length()))
        .isEqualTo(referenceCrc16(s.bytes(), s.offset(), s.length()));
  }

  @Property
  void slotOfKeysWithBracesMatchesTheReference(@ForAll("braceKeys") byte[] key) {
    assertThat(KeySlots.slotOf(key)).isEqualTo(referenceSlot(key, 0, key.length));
  }

  @Property
  void slotOfTaggedKeysMatchesTheReference(@ForAll("taggedKeys") byte[] key) {
    assertThat(KeySlots.slotOf(key)).isEqualTo(referenceSlot(key, 0, key.length));
  }

  @Property
  void slotOfASliceMatchesTheReference(@ForAll("slices") Slice s) {
    assertThat(KeySlots.slotOf(s.bytes(), s.offset(), s.length()))
        .isEqualTo(referenceSlot(s.bytes(), s.offset(), s.length()));
  }

  @Example
  void everyLengthAndTagPlacementUpToThreeWords() {
    // Exhaustive over where one tag sits in keys up to 24 bytes: every word and tail boundary.
    for (int length = 0; length <= 24; length++) {
      byte[] key = new byte[length];
      for (int i = 0; i < length; i++) {
        key[i] = (byte) ('a' + i);
      }
      assertThat(KeySlots.slotOf(key)).isEqualTo(referenceSlot(key, 0, length));
      for (int open = 0; open < length; open++) {
        for (int close = open + 1; close < length; close++) {
          byte[] tagged = key.clone();
          tagged[open] = '{';
          tagged[close] = '}';
          assertThat(KeySlots.slotOf(tagged)).as("length %d, { at %d, } at %d", length, open, close)
              .isEqualTo(referenceSlot(tagged, 0, length));
        }
      }
    }
  }
}
