package io.atoll.core;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.atoll.core.slots.SlotState;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.Combinators;
import net.jqwik.api.Example;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;

/**
 * Whatever the model and {@link ClusterConfig.Builder} accept, the decoder reads back equal; and
 * what the decoder would reject, the model refuses up front. The manager once accepted a version of
 * 65 accented letters (130 bytes of UTF-8): it saved it, then could decode none of its configs.
 */
class ConfigRoundTripProperties {

  /** Text of every kind: ASCII, accented, CJK, emoji (surrogate pairs), lone surrogates, blanks; long and short. */
  @Provide
  Arbitrary<String> texts() {
    Arbitrary<Character> chars = Arbitraries.oneOf(
        Arbitraries.chars().range('a', 'z'),
        Arbitraries.chars().range('\u00e0', '\u00ff'),
        Arbitraries.chars().range('\u4e00', '\u4e20'),
        Arbitraries.chars().range('\ud800', '\udfff'),
        Arbitraries.of(' ', '\t', '.', '-', ':'));
    Arbitrary<String> plain = chars.list().ofMinSize(0).ofMaxSize(300).map(ConfigRoundTripProperties::join);
    Arbitrary<String> emoji = Arbitraries.integers().between(1, 80).map(n -> "\uD83D\uDE00".repeat(n));
    return Arbitraries.oneOf(plain, emoji, Arbitraries.integers().between(60, 140).map("\u00e9"::repeat));
  }

  private static String join(List<Character> cs) {
    StringBuilder b = new StringBuilder(cs.size());
    cs.forEach(b::append);
    return b.toString();
  }

  /** What the decoder accepts for a text field, stated independently of the model's checks. */
  private static boolean decodable(String s, int maxBytes) {
    byte[] utf8 = s.getBytes(StandardCharsets.UTF_8);
    return !s.isBlank() && utf8.length <= maxBytes && new String(utf8, StandardCharsets.UTF_8).equals(s);
  }

  @Property(tries = 2000)
  void aHostIsAcceptedExactlyWhenTheDecoderWouldReadItBack(@ForAll("texts") String host) {
    if (decodable(host, 255)) {
      assertThat(new PodAddress(host, 1).host()).isEqualTo(host);
    } else {
      assertThatThrownBy(() -> new PodAddress(host, 1)).isInstanceOf(IllegalArgumentException.class)
          .hasMessageStartingWith("host: ");
    }
  }

  @Property(tries = 2000)
  void aVersionIsAcceptedExactlyWhenTheDecoderWouldReadItBack(@ForAll("texts") String version) {
    if (decodable(version, 128)) {
      assertThat(PodVersion.of(version).value()).isEqualTo(version);
    } else {
      assertThatThrownBy(() -> PodVersion.of(version)).isInstanceOf(IllegalArgumentException.class)
          .hasMessageStartingWith("version: ");
    }
  }

  @Provide
  Arbitrary<List<Optional<PodEntry>>> entries() {
    Arbitrary<Long> epochs = Arbitraries.oneOf(Arbitraries.longs().between(0, 10),
        Arbitraries.longs().between(0, Long.MAX_VALUE), Arbitraries.just(Long.MAX_VALUE));
    return Combinators.combine(texts(), Arbitraries.integers().between(1, 65535), Arbitraries.longs(), texts(),
        Arbitraries.of(PodStatus.class), epochs).as((host, port, inc, version, status, epoch) -> {
          try {
            return Optional.of(new PodEntry(new Pod(new PodId(new PodAddress(host, port), inc),
                new PodVersion(version)), status, epoch));
          } catch (IllegalArgumentException refused) {
            return Optional.<PodEntry>empty(); // the model refused it: nothing to store
          }
        }).list().ofMaxSize(12);
  }

  @Property(tries = 1000)
  void everyConfigTheBuilderAcceptsDecodesBackEqual(@ForAll("entries") List<Optional<PodEntry>> drawn,
      @ForAll("sizes") int size, @ForAll long seed) {
    java.util.Random r = new java.util.Random(seed);
    ClusterConfig.Builder b = ClusterConfig.empty(size).toBuilder();
    List<PodId> ids = new ArrayList<>();
    for (Optional<PodEntry> e : drawn) {
      e.ifPresent(entry -> {
        b.pod(entry);
        ids.add(entry.id());
      });
    }
    for (int pos = 0; pos < size && !ids.isEmpty(); pos += 1 + r.nextInt(7)) {
      PodId owner = ids.get(r.nextInt(ids.size()));
      long epoch = r.nextBoolean() ? r.nextInt(100) : r.nextLong() & Long.MAX_VALUE;
      SlotState st = SlotState.values()[r.nextInt(SlotState.values().length)];
      b.claim(pos, st == SlotState.OFFLINE ? Claim.offline(epoch)
          : new Claim(owner, st, st.hasPeer() ? ids.get(r.nextInt(ids.size())) : null, epoch));
    }
    ClusterConfig c = b.build();
    ClusterConfig back = ClusterConfig.decode(c.encode());
    assertThat(back).isEqualTo(c);
    assertThat(back.encode()).isEqualTo(c.encode());
    assertThat(back.epoch()).isEqualTo(c.epoch());
  }

  @Provide
  Arbitrary<Integer> sizes() {
    return Arbitraries.oneOf(Arbitraries.integers().between(1, 40), Arbitraries.of(1024, 1025, 2100));
  }

  @Example
  void aVersionOf65AccentedLettersIsRefusedNotStored() {
    String version = "\u00e9".repeat(65); // 65 characters, 130 bytes of UTF-8
    assertThatThrownBy(() -> PodVersion.of(version))
        .hasMessageContaining("130 bytes of UTF-8")
        .hasMessageContaining("at most 128 bytes");
    assertThat(PodVersion.of("\u00e9".repeat(64)).value()).hasSize(64);
  }

  @Example
  void aHostLongerThanTheDecoderReadsIsRefused() {
    assertThatThrownBy(() -> new PodAddress("h".repeat(256), 1)).hasMessageContaining("256 bytes of UTF-8");
    assertThatThrownBy(() -> new PodAddress("\u00e9".repeat(128), 1)).hasMessageContaining("256 bytes of UTF-8");
    assertThatThrownBy(() -> new PodAddress("a\ud800b", 1)).hasMessageContaining("unpaired surrogate");
    assertThat(new PodAddress("h".repeat(255), 1).host()).hasSize(255);
  }
}
