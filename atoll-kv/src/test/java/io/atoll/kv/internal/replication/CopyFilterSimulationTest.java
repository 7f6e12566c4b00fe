package io.atoll.kv.internal.replication;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;

/**
 * A simulation of a full copy under writes, as {@link Feed} sends it and a replica filters it with
 * {@link CopyFilter}: writers change keys of random slots (INCR, which a double application would
 * show, and SET) at random moments between the copies of slots and the sends of the stream; the
 * copy of a slot is taken at the stream's offset of that moment; the stream is sent between copies
 * and after the copy's end. Invariant: once the replica has read all that was sent, it holds
 * exactly the primary's keys, whatever the interleaving.
 */
class CopyFilterSimulationTest {
  private static final int SLOTS = 16;

  /** One record of the stream: a change of one key, its bytes' length. */
  private record Change(int slot, String key, boolean incr, long value, long at, int length) {}

  /** What travels on the link, in order. */
  private sealed interface Sent permits Frame, StreamBytes, End {}

  private record Frame(int slot, long from, Map<String, Long> keys) implements Sent {}

  private record StreamBytes(List<Change> changes) implements Sent {}

  private record End() implements Sent {}

  @Property(tries = 400)
  void aReplicaEndsWithThePrimarysKeysWhateverTheInterleaving(@ForAll long seed) {
    Random random = new Random(seed);
    List<Map<String, Long>> primary = new ArrayList<>();
    for (int s = 0; s < SLOTS; s++) {
      primary.add(new HashMap<>());
    }
    List<Change> stream = new ArrayList<>();
    long[] end = {0};
    Runnable write = () -> {
      int s = random.nextInt(SLOTS);
      String key = "k" + s + ":" + random.nextInt(3);
      boolean incr = random.nextBoolean();
      long value = incr ? primary.get(s).getOrDefault(key, 0L) + 1 : random.nextInt(1000);
      primary.get(s).put(key, value);
      int length = 10 + random.nextInt(40);
      stream.add(new Change(s, key, incr, value, end[0], length));
      end[0] += length;
    };
    for (int i = 0; i < 20; i++) {
      write.run(); // before any replica: the copy holds these
    }
    // The feed: the stream kept from here, then each slot copied in turn, the stream sent between.
    int cursor = stream.size();
    long startOffset = end[0];
    List<Sent> link = new ArrayList<>();
    List<Sent> unsent = new ArrayList<>();
    for (int s = 0; s < SLOTS; s++) {
      while (random.nextInt(3) == 0) {
        write.run();
      }
      unsent.add(new Frame(s, end[0], new HashMap<>(primary.get(s))));
      if (random.nextInt(4) == 0) { // the copy so far goes out, then the stream so far
        link.addAll(unsent);
        unsent.clear();
        link.add(new StreamBytes(new ArrayList<>(stream.subList(cursor, stream.size()))));
        cursor = stream.size();
      }
    }
    unsent.add(new End());
    link.addAll(unsent);
    for (int i = 0; i < 30; i++) {
      write.run();
      if (random.nextInt(3) == 0) {
        link.add(new StreamBytes(new ArrayList<>(stream.subList(cursor, stream.size()))));
        cursor = stream.size();
      }
    }
    link.add(new StreamBytes(new ArrayList<>(stream.subList(cursor, stream.size()))));

    // The replica: an empty store, the filter, the offset counted from the copy's start.
    List<Map<String, Long>> replica = new ArrayList<>();
    for (int s = 0; s < SLOTS; s++) {
      replica.add(new HashMap<>());
    }
    CopyFilter copy = new CopyFilter(SLOTS);
    boolean filtering = true;
    long offset = startOffset;
    for (Sent sent : link) {
      switch (sent) {
        case Frame f -> {
          copy.copied(f.slot(), f.from());
          replica.get(f.slot()).putAll(f.keys());
        }
        case End e -> copy.complete();
        case StreamBytes b -> {
          for (Change c : b.changes()) {
            assertThat(c.at()).isEqualTo(offset); // the stream arrives whole and in order
            long at = offset;
            offset += c.length();
            if (filtering && copy.over(at)) {
              filtering = false;
            }
            if (!filtering || copy.applies(c.slot(), at)) {
              Map<String, Long> slot = replica.get(c.slot());
              slot.put(c.key(), c.incr() ? slot.getOrDefault(c.key(), 0L) + 1 : c.value());
            }
          }
        }
      }
    }
    assertThat(replica).isEqualTo(primary);
  }
}
