package io.atoll.kv.internal.cluster;

import io.atoll.core.PodId;
import io.atoll.kv.internal.store.Entry;
import io.atoll.kv.internal.store.Key;
import io.atoll.kv.internal.store.Slot;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;

/**
 * One batch of RESTORE-ASKING requests for the keys of one slot, pipelined under the slot's lock:
 * each key is deleted here only after the target's OK, so a write acknowledged on either side is
 * never lost.
 *
 * <p>Managed hand-offs ({@code holdFor} not null) also close the window of a batch whose answers
 * time out: its restores may still reach the target and apply late, so this node cannot know
 * whether the target holds a copy. Such keys stay here, <em>held</em> ({@link Slot#hold}): routing
 * answers TRYAGAIN for them, so no client changes or deletes one here while a stale copy may sit on
 * the target for {@code -ASK} to find. They are sent again first by the next attempt, after the
 * target fenced the old one (its token, see {@code Imports}): a held key still here goes with its
 * value, one gone here (it expired) with a restore that deletes it there ({@code ABSTTL} in the
 * past), and a held key is released only on the target's OK to that. A return from the target
 * (whose {@code ATOLL-RETURN} fences too) keeps this node's side of every held key.
 */
final class RestoreBatch {
  private static final byte[] RESTORE = ascii("RESTORE-ASKING");
  private static final byte[] REPLACE = ascii("REPLACE");
  private static final byte[] ABSTTL = ascii("ABSTTL");
  private static final byte[] GONE_PAYLOAD = Dump.dump(new Entry(new byte[0]));

  /** Payload bytes after which a batch ends (as a return's batches are capped at 8 MB). */
  static final long MAX_BYTES = 8L << 20;

  private RestoreBatch() {}

  /** Thrown when the target answered a restore with an error; the text is the reply to give. */
  static final class TargetError extends RuntimeException {
    private static final long serialVersionUID = 1L;

    TargetError(String message) {
      super(message, null, false, false);
    }
  }

  /**
   * Sends {@code keys} of {@code slot} and deletes here those the target took (none with {@code
   * copy}); how many existed here. With {@code holdFor}, held keys gone here are deleted at the
   * target, and the keys sent and not answered when the batch fails (its connection, or anything
   * else part way, as a payload that cannot be built) are held for {@code holdFor}.
   *
   * @throws IOException if the connection failed or timed out
   * @throws TargetError if the target refused some key (the others it took are deleted here)
   */
  static int move(RespClient client, Slot slot, List<byte[]> keys, java.util.function.LongSupplier clock, boolean copy, boolean replace,
      PodId holdFor) throws IOException {
    return move(client, slot, keys, clock, copy, replace, holdFor, Dump::dump, MAX_BYTES);
  }

  /**
   * As above, with the payload of each key made by {@code dump} (a test makes one fail part way),
   * and, with {@code holdFor}, the batch ended before a key once {@code maxBytes} of payloads are
   * queued (the first key always goes); the keys left out stay here for the next batch.
   */
  static int move(RespClient client, Slot slot, List<byte[]> keys, java.util.function.LongSupplier clock, boolean copy, boolean replace,
      PodId holdFor, java.util.function.Function<Entry, byte[]> dump, long maxBytes) throws IOException {
    synchronized (slot) {
      long now = clock.getAsLong();
      List<Key> sent = new ArrayList<>();
      int present = 0;
      // Whether every restore sent was answered: until then, any failure (an IOException, or a
      // payload that failed to build after earlier restores were flushed as the buffer filled)
      // leaves restores the target may apply late, so their keys are held.
      boolean answered = false;
      long bytes = 0;
      try {
        for (byte[] k : keys) {
          if (holdFor != null && bytes >= maxBytes) {
            // A hand-off's batch: the rest go with the next one (Migrator asks until none is left),
            // so a batch's time and memory stay bounded. MIGRATE sends the keys it was given.
            break;
          }
          Key key = new Key(k);
          Entry e = slot.get(key, now);
          List<byte[]> cmd = new ArrayList<>(7);
          cmd.add(RESTORE);
          cmd.add(k);
          if (e != null) {
            cmd.add(ascii(Long.toString(e.expireAt == 0 ? 0 : Math.max(1, e.expireAt - now))));
            byte[] payload = dump.apply(e);
            cmd.add(payload);
            bytes += payload.length + k.length;
            present++;
          } else if (holdFor != null && slot.isHeld(key)) {
            // Gone here (expired) while held: a late copy on the target must go too.
            cmd.add(ascii("1"));
            cmd.add(GONE_PAYLOAD);
            cmd.add(ABSTTL);
          } else {
            continue;
          }
          if (replace) {
            cmd.add(REPLACE);
          }
          sent.add(key);
          client.send(cmd);
        }
        if (sent.isEmpty()) {
          answered = true;
          return 0;
        }
        client.flush();
        String firstError = null;
        while (!sent.isEmpty()) {
          String err = client.read();
          Key key = sent.removeFirst();
          if (err == null) {
            if (!copy) {
              slot.remove(key);
            }
            slot.release(key);
          } else if (firstError == null) {
            firstError = err;
          }
        }
        answered = true;
        if (firstError != null) {
          throw new TargetError("ERR Target instance replied with error: " + firstError);
        }
        return present;
      } finally {
        if (!answered && holdFor != null) {
          // Sent, or perhaps sent, and not answered: the target may apply them late. Keys held
          // already were re-pointed to the target's heir if it died (MarkRecords): so are these.
          slot.hold(slot.heldFor() != null ? slot.heldFor() : holdFor, sent);
        }
      }
    }
  }

  /**
   * The keys of {@code slot} to send next: held keys first (at most {@code limit}), else up to
   * {@code limit} live keys. Call under the slot's lock.
   */
  static List<byte[]> next(Slot slot, long now, int limit) {
    List<Key> held = slot.heldKeys(limit);
    if (held.isEmpty()) {
      return slot.keys(now, limit);
    }
    List<byte[]> keys = new ArrayList<>(held.size());
    for (Key k : held) {
      keys.add(k.bytes());
    }
    return keys;
  }

  private static byte[] ascii(String s) {
    return s.getBytes(StandardCharsets.US_ASCII);
  }
}
