package io.atoll.kv.internal.replication;

import io.atoll.kv.internal.persist.LogBuffer;
import io.atoll.kv.internal.persist.RecordJournal;
import io.atoll.kv.internal.persist.SlotCopy;
import io.atoll.kv.internal.store.Entry;
import io.atoll.kv.internal.store.Key;

/**
 * A primary's replication stream: every change to its keys as the records its log holds (see
 * {@link RecordJournal}), numbered by byte offset from the node's start, the last {@code capacity}
 * bytes kept in a ring for the replicas to read (Redis' {@code repl-backlog}). Until the first
 * replica asks for it the stream is not kept at all (no cost without replicas) and the offset stays
 * 0, as Redis creates its backlog with the first replica. Each change is appended holding its
 * slot's lock, so a slot's records are in the order of its changes. Thread-safe.
 */
public final class Backlog extends RecordJournal {
  private final int capacity;
  private byte[] ring; // allocated by the first activate; guarded by this
  private final LogBuffer scratch = new LogBuffer(4 << 10); // guarded by this
  /** Offset just past the last byte appended (Redis' master_repl_offset). */
  private long end; // guarded by this
  /** The first offset whose bytes the ring holds at all (past a record too large for it). */
  private long valid; // guarded by this
  private volatile boolean active;

  /** A backlog keeping the last {@code capacity} bytes of the stream once active. */
  public Backlog(int capacity) {
    if (capacity < 1 << 10) {
      throw new IllegalArgumentException("repl-backlog-size: " + capacity + " (expected: at least 1024 bytes)");
    }
    this.capacity = capacity;
  }

  /** Starts keeping the stream (the first replica asked for it); from now on every change is in it. */
  public synchronized void activate() {
    if (ring == null) {
      ring = new byte[capacity];
    }
    active = true;
  }

  /** Whether the stream is kept. */
  public boolean active() {
    return active;
  }

  /** Offset just past the last byte appended. */
  public synchronized long offset() {
    return end;
  }

  /** The first offset still held (equal to {@link #offset} when nothing is held). */
  public synchronized long firstOffset() {
    return Math.max(valid, end - capacity);
  }

  /** The ring's size in bytes. */
  public int capacity() {
    return capacity;
  }

  @Override
  protected void record(byte[]... args) {
    if (!active) {
      return;
    }
    synchronized (this) {
      scratch.clear();
      scratch.record(args);
      append();
    }
  }

  @Override
  public void stored(int slot, Key key, Entry entry) {
    if (!active) {
      return;
    }
    synchronized (this) {
      scratch.clear();
      SlotCopy.encode(scratch, key, entry);
      append();
    }
  }

  /** A command that logs itself whole (see {@code CommandLog#command}). */
  public void command(byte[][] args) {
    record(args);
  }

  private void append() {
    java.nio.ByteBuffer b = scratch.view();
    int n = b.remaining();
    if (n > ring.length) {
      // One record larger than the whole ring: no replica can be sent it from here. The stream
      // moves past it, so every replica reading behind this offset resynchronises in full.
      end += n;
      valid = end;
      notifyAll();
      return;
    }
    int at = (int) (end % ring.length);
    int first = Math.min(n, ring.length - at);
    b.get(ring, at, first);
    b.get(ring, 0, n - first);
    end += n;
    notifyAll();
  }

  /**
   * Copies bytes from offset {@code from} into {@code dst}, waiting up to {@code waitMillis} for
   * some to be appended if there are none yet.
   *
   * @return how many bytes were copied (0: none yet), or -1 if {@code from} is no longer held (or
   *     was never appended)
   */
  public synchronized int read(long from, byte[] dst, long waitMillis) throws InterruptedException {
    if (from == end && waitMillis > 0) {
      wait(waitMillis);
    }
    if (from > end || from < firstOffset()) {
      return -1;
    }
    int n = (int) Math.min(dst.length, end - from);
    if (n == 0) {
      return 0;
    }
    int at = (int) (from % ring.length);
    int first = Math.min(n, ring.length - at);
    System.arraycopy(ring, at, dst, 0, first);
    System.arraycopy(ring, 0, dst, first, n - first);
    return n;
  }

  /** Wakes readers waiting in {@link #read} (a feed that stops). */
  public synchronized void wakeAll() {
    notifyAll();
  }
}
