package io.atoll.kv.internal.replication;

import io.atoll.core.slots.KeySlots;
import io.atoll.kv.internal.persist.LogBuffer;
import io.atoll.kv.internal.persist.SlotCopy;
import io.atoll.kv.internal.store.Slot;
import io.atoll.kv.internal.store.SlotStore;
import io.netty.buffer.Unpooled;
import io.netty.channel.Channel;
import io.netty.channel.ChannelFuture;
import java.nio.charset.StandardCharsets;
import java.util.function.LongSupplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A primary's side of one replica's link: on its own thread, sends the replica what it lacks, then
 * the {@link Backlog} as it grows.
 *
 * <p>A full copy needs no fork and stops no writer for more than one slot's copy: the stream is
 * kept from offset {@code O} on, then each slot is copied holding its lock and sent as a frame
 * {@code ATOLL-SYNCSLOT slot from n} (the stream's offset when it was copied, and its n records),
 * between runs of the stream itself from {@code O}. A replica applies a stream record of a slot
 * only once that slot's frame arrived and only from the slot's {@code from} on: what came before is
 * in the copy. {@code ATOLL-SYNCED} ends the copy (the stream after it may still hold records the copy has: the
 * replica filters them until the stream passes every slot's {@code from}). So the replica never has to hold the stream
 * while the copy travels; the backlog's size bounds how far behind it may be, and a replica that
 * falls further is cut off and starts over (Redis' output-buffer limit for replicas).
 */
final class Feed implements Runnable {
  private static final Logger LOG = LoggerFactory.getLogger(Feed.class);
  static final String SYNCSLOT = "ATOLL-SYNCSLOT";
  static final String SYNCED = "ATOLL-SYNCED";
  private static final int CHUNK = 256 << 10;
  /** Redis' repl-timeout. */
  static final long TIMEOUT_MILLIS = 60_000;

  private final Channel channel;
  private final Backlog backlog;
  private final SlotStore store;
  private final String replId;
  /** Where the replica asked to continue from, or -1 for a full copy. */
  private final long continueAt;
  private final LongSupplier clock;
  private final Runnable onEnd;
  /** Called once, when the replica has acknowledged the whole copy (or the offset it continued from). */
  private final Runnable onSynced;
  /** The stream offset the replica holds everything up to once it acknowledged it; until known, none. */
  private volatile long syncedAt = Long.MAX_VALUE;
  volatile boolean synced;
  final int listeningPort;
  final String host;
  volatile long acked;
  volatile long ackedAt;
  volatile String state = "wait_bgsave";
  private volatile boolean stopped;

  Feed(Channel channel, Backlog backlog, SlotStore store, String replId, long continueAt, int listeningPort,
      String host, LongSupplier clock, Runnable onEnd, Runnable onSynced) {
    this.onSynced = onSynced;
    this.channel = channel;
    this.backlog = backlog;
    this.store = store;
    this.replId = replId;
    this.continueAt = continueAt;
    this.listeningPort = listeningPort;
    this.host = host;
    this.clock = clock;
    this.onEnd = onEnd;
    this.ackedAt = clock.getAsLong();
  }

  /** The replica said it holds the stream up to {@code offset}. */
  void ack(long offset) {
    acked = Math.max(acked, offset);
    ackedAt = clock.getAsLong();
    checkSynced();
  }

  private void checkSynced() {
    if (!synced && acked >= syncedAt) {
      synchronized (this) {
        if (synced) {
          return;
        }
        synced = true;
      }
      onSynced.run();
    }
  }

  /** Stops sending and closes the link. */
  void stop() {
    stopped = true;
    backlog.wakeAll();
    channel.close();
  }

  @Override
  public void run() {
    try {
      long cursor;
      if (continueAt < 0) {
        cursor = fullCopy();
        if (cursor < 0) {
          return; // stopped part way: the replica never hears the copy is complete
        }
      } else {
        send(("+CONTINUE " + replId + "\r\n").getBytes(StandardCharsets.US_ASCII));
        cursor = continueAt;
        acked = continueAt;
      }
      syncedAt = cursor;
      checkSynced();
      state = "online";
      byte[] chunk = new byte[CHUNK];
      while (!stopped && channel.isActive()) {
        cursor = drain(cursor, chunk, 200);
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    } catch (Cut e) {
      LOG.warn("replica {}:{}: {}; its link is closed, it will resynchronise", host, listeningPort, e.getMessage());
    } finally {
      channel.close();
      onEnd.run();
    }
  }

  /**
   * Sends the copy, with the stream from its start interleaved; returns the stream offset reached,
   * or -1 if the feed was stopped before every slot was sent (then nothing more is sent).
   */
  private long fullCopy() throws InterruptedException, Cut {
    backlog.activate();
    long cursor = backlog.offset();
    send(("+FULLRESYNC " + replId + " " + cursor + "\r\n").getBytes(StandardCharsets.US_ASCII));
    state = "send_bulk";
    LogBuffer out = new LogBuffer(CHUNK + (64 << 10));
    LogBuffer slotRecords = new LogBuffer(64 << 10);
    byte[] chunk = new byte[CHUNK];
    long now = clock.getAsLong();
    for (int s = 0; s < KeySlots.SLOT_COUNT && !stopped; s++) {
      Slot slot = store.slot(s);
      long from;
      long n;
      slotRecords.clear();
      synchronized (slot) {
        from = backlog.offset();
        n = SlotCopy.copySlot(slot, now, slotRecords);
      }
      out.record(SYNCSLOT.getBytes(StandardCharsets.US_ASCII), SlotCopy.ascii(s), SlotCopy.ascii(from),
          SlotCopy.ascii(n));
      out.appendRaw(slotRecords);
      if (out.length() >= CHUNK) {
        send(out);
        cursor = drain(cursor, chunk, 0); // the stream so far, before the backlog moves past it
      }
    }
    if (stopped) {
      // Stopped part way (say this node became a replica): SYNCED now would tell the replica a
      // copy with slots missing is whole, and it would acknowledge and serve it.
      return -1;
    }
    out.record(SYNCED.getBytes(StandardCharsets.US_ASCII));
    send(out);
    return cursor;
  }

  /** Sends the backlog from {@code cursor} to its end (waiting up to {@code waitMillis} for some). */
  private long drain(long cursor, byte[] chunk, long waitMillis) throws InterruptedException, Cut {
    long wait = waitMillis;
    while (!stopped) {
      int n = backlog.read(cursor, chunk, wait);
      if (n < 0) {
        throw new Cut("it fell behind the replication backlog (offset " + cursor + " is no longer held; the"
            + " backlog holds from " + backlog.firstOffset() + ")");
      }
      if (n == 0) {
        return cursor;
      }
      send(java.util.Arrays.copyOf(chunk, n));
      cursor += n;
      wait = 0;
    }
    return cursor;
  }

  private void send(LogBuffer b) throws InterruptedException, Cut {
    java.nio.ByteBuffer v = b.view();
    byte[] bytes = new byte[v.remaining()];
    v.get(bytes);
    b.clear();
    send(bytes);
  }

  private void send(byte[] bytes) throws InterruptedException, Cut {
    ChannelFuture f = channel.writeAndFlush(Unpooled.wrappedBuffer(bytes));
    // One chunk in flight: what waits to be sent is bounded; a replica that reads nothing for
    // the replication timeout is cut (Redis' repl-timeout).
    if (!f.await(TIMEOUT_MILLIS)) {
      throw new Cut("it read nothing for " + TIMEOUT_MILLIS + " ms");
    }
    if (!f.isSuccess()) {
      throw new Cut("the link failed (" + (f.cause() == null ? "closed" : f.cause().getMessage()) + ")");
    }
  }

  /** The link must end. */
  private static final class Cut extends Exception {
    private static final long serialVersionUID = 1L;

    Cut(String message) {
      super(message, null, false, false);
    }
  }
}
