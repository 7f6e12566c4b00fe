package io.atoll.kv.internal.replication;

import io.atoll.core.slots.KeySlots;
import io.atoll.kv.internal.cluster.RespClient;
import io.atoll.kv.internal.persist.LogReader;
import io.atoll.kv.internal.persist.RecordJournal;
import io.atoll.kv.internal.store.SlotStore;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.function.LongSupplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A replica's side of its link to its primary: on its own thread, connects, asks to continue where
 * it stopped ({@code PSYNC replid offset}) or takes a full copy (see {@link Feed}), applies every
 * record in order, and says how far it got ({@code REPLCONF ACK}) each time it has read all that
 * arrived, at least every 100 ms while the stream flows. A broken link is opened again after a
 * second, until {@link #stop}.
 */
final class Follower implements Runnable {
  private static final Logger LOG = LoggerFactory.getLogger(Follower.class);
  private static final long ACK_MILLIS = 100;
  private static final byte[] PING = "ping".getBytes(StandardCharsets.US_ASCII);

  private final String host;
  private final int port;
  private final byte[] password;
  private final int myPort;
  private final int maxBulk;
  private final int timeoutMillis;
  private final SlotStore store;
  private final Replicator.Applier applier;
  private final LongSupplier clock;
  private final Object sleeper = new Object();
  private volatile boolean stopped;
  private volatile RespClient client;
  /**
   * The Redis id of the node to follow: a node at its address that answers another id (say, one
   * restarted there as a new node, empty) is not followed, or the copy would wipe this one.
   */
  private final String primaryId;
  /** The stream this replica holds a prefix of: the primary's id and how many bytes it applied. */
  private volatile String replId;
  private volatile long offset;
  private volatile boolean synced;
  /** Whether a new link may continue from {@link #offset}: a copy's filter, if any, is over. */
  private volatile boolean resumable;
  private volatile String state = "connect";
  private volatile long lastIo;
  private volatile long downSince;
  /** Whether a manual failover waits for this replica to catch up (then each record wakes it). */
  private volatile boolean watched;
  private final Object progress = new Object();
  /** The last link failure logged at WARN, and when (the follower's thread only). */
  private String lastWarning;
  private long lastWarningAt;

  Follower(String host, int port, String primaryId, byte[] password, int myPort, int maxBulk, int timeoutMillis,
      SlotStore store, Replicator.Applier applier, LongSupplier clock) {
    this.primaryId = primaryId;
    this.host = host;
    this.port = port;
    this.password = password;
    this.myPort = myPort;
    this.maxBulk = maxBulk;
    this.timeoutMillis = timeoutMillis;
    this.store = store;
    this.applier = applier;
    this.clock = clock;
    this.downSince = clock.getAsLong();
  }

  String host() {
    return host;
  }

  int port() {
    return port;
  }

  /** ROLE's state: connect, connecting, sync or connected. */
  String state() {
    return state;
  }

  /** Whether the link is up and the full copy, if one was needed, is complete. */
  boolean upToDate() {
    return synced && "connected".equals(state);
  }

  /** How many bytes of the primary's stream this replica applied. */
  long offset() {
    return offset;
  }

  String replId() {
    return replId;
  }

  long lastIo() {
    return lastIo;
  }

  long downSince() {
    return downSince;
  }

  /**
   * Waits until this replica applied the stream up to {@code target} with its full copy complete,
   * or the clock passed {@code deadline}; whether it did.
   */
  boolean awaitCaughtUp(long target, long deadline) throws InterruptedException {
    synchronized (progress) {
      watched = true;
      try {
        while (offset < target || !upToDate()) {
          long left = deadline - clock.getAsLong();
          if (left <= 0 || stopped) {
            return false;
          }
          progress.wait(Math.min(left, 50));
        }
        return true;
      } finally {
        watched = false;
      }
    }
  }

  /** Ends the link for good. */
  void stop() {
    stopped = true;
    RespClient c = client;
    if (c != null) {
      try {
        c.close();
      } catch (IOException ignored) {
        // closing
      }
    }
    synchronized (sleeper) {
      sleeper.notifyAll();
    }
  }

  @Override
  public void run() {
    while (!stopped) {
      try {
        follow();
      } catch (IOException | RuntimeException e) {
        if (!stopped) {
          // Once per cause and minute: a primary that is gone (until the manager promotes this
          // node, or gossip moves its slots) is tried every second.
          String why = String.valueOf(e.getMessage());
          long now = clock.getAsLong();
          if (!why.equals(lastWarning) || now - lastWarningAt >= 60_000) {
            LOG.warn("replication: link to primary {}:{} lost: {}", host, port, why);
            lastWarning = why;
            lastWarningAt = now;
          } else {
            LOG.debug("replication: link to primary {}:{} lost: {}", host, port, why);
          }
        }
      } finally {
        RespClient c = client;
        client = null;
        if (c != null) {
          try {
            c.close();
          } catch (IOException ignored) {
            // gone
          }
        }
        if ("connected".equals(state) || "sync".equals(state)) {
          downSince = clock.getAsLong();
        }
        state = "connect";
      }
      synchronized (sleeper) {
        if (!stopped) {
          try {
            sleeper.wait(1000);
          } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return;
          }
        }
      }
    }
  }

  private void follow() throws IOException {
    state = "connecting";
    RespClient c = new RespClient(host, port, timeoutMillis);
    client = c;
    if (stopped) {
      return;
    }
    if (password != null) {
      c.send(List.of(b("AUTH"), password));
      c.flush();
      String err = c.read();
      if (err != null) {
        throw new IOException("the primary refused AUTH: " + err);
      }
    }
    c.send(List.of(b("CLUSTER"), b("MYID")));
    c.flush();
    String id;
    try {
      id = new String(c.readBulk(64), java.nio.charset.StandardCharsets.US_ASCII);
    } catch (IllegalStateException refused) {
      throw new IOException("the primary refused CLUSTER MYID: " + refused.getMessage());
    }
    if (!id.equals(primaryId)) {
      throw new IOException("the node at " + host + ":" + port + " is " + id + ", not the primary " + primaryId
          + " this node replicates (restarted there as another node?): not followed");
    }
    c.send(List.of(b("REPLCONF"), b("listening-port"), b(Integer.toString(myPort))));
    String known = replId;
    // Continuing needs a copy whose filter is over: before that, the stream still carries records
    // the copy holds, which only the filter (gone with the link) knew to skip.
    boolean resume = known != null && resumable;
    c.send(List.of(b("PSYNC"), b(resume ? known : "?"), b(resume ? Long.toString(offset + 1) : "-1")));
    c.flush();
    String err = c.read();
    if (err != null) {
      throw new IOException("the primary refused REPLCONF: " + err);
    }
    String line = c.readLine();
    CopyFilter copy = null;
    if (line.startsWith("+FULLRESYNC ")) {
      String[] p = line.split(" ");
      if (p.length != 3) {
        throw new IOException("malformed reply to PSYNC: " + line);
      }
      replId = p[1];
      offset = Long.parseLong(p[2]);
      synced = false;
      resumable = false;
      state = "sync";
      copy = new CopyFilter(KeySlots.SLOT_COUNT);
      // Each slot is replaced when its copy arrives, not all at once now: until then it keeps what
      // this replica held, which is every write its primary acknowledged (a primary that waits for
      // its replicas acknowledges nothing while this one is not online), so a promotion during the
      // copy finds each slot whole, old or new. Not so if this replica restarted meanwhile: its
      // acks went out before its log reached the disk (appendfsync everysec), so what it reloaded
      // may lack the last writes it acknowledged.
      LOG.info("replication: full copy from primary {}:{} (replication id {}, offset {})", host, port, replId, offset);
    } else if (line.startsWith("+CONTINUE")) {
      state = "connected";
      LOG.info("replication: continuing from primary {}:{} at offset {}", host, port, offset);
    } else {
      throw new IOException("the primary refused PSYNC: " + line);
    }
    InputStream in = c.input();
    LogReader reader = LogReader.stream(in, 0, maxBulk);
    long snapshotLeft = 0;
    long lastAck = 0;
    while (!stopped) {
      LogReader.Next next = reader.next();
      if (!(next instanceof LogReader.Record rec)) {
        throw new IOException(next instanceof LogReader.End ? "the primary closed the link"
            : "the stream is malformed: " + next);
      }
      lastIo = clock.getAsLong();
      byte[][] args = rec.args();
      String name = new String(args[0], StandardCharsets.US_ASCII);
      if (snapshotLeft > 0) {
        apply(args);
        snapshotLeft--;
      } else if (copy != null && name.equals(Feed.SYNCSLOT)) {
        int slot = Integer.parseInt(new String(args[1], StandardCharsets.US_ASCII));
        if (slot < 0 || slot >= KeySlots.SLOT_COUNT) {
          throw new IOException("the stream is malformed: a copy of slot " + slot);
        }
        copy.copied(slot, Long.parseLong(new String(args[2], StandardCharsets.US_ASCII)));
        io.atoll.kv.internal.store.Slot replaced = store.slot(slot);
        synchronized (replaced) {
          replaced.clear(); // logged: a crash meanwhile restarts from the copy's start
          // The slot's hand-off state goes with its keys: the copy carries the primary's, if any.
          replaced.imported(null, 0);
          replaced.marks(null, null);
          replaced.returned(null, 0);
        }
        snapshotLeft = Long.parseLong(new String(args[3], StandardCharsets.US_ASCII));
      } else if (copy != null && name.equals(Feed.SYNCED)) {
        // Records of the stream sent after the copy may still be in it: the filter stays until the
        // stream passes the last slot's copy.
        copy.complete();
        synced = true;
        state = "connected";
        LOG.info("replication: full copy from primary {}:{} complete at offset {}", host, port, offset);
      } else {
        long at = offset;
        if (!java.util.Arrays.equals(args[0], PING)) {
          if (copy != null && copy.over(at)) {
            copy = null; // past every slot's copy
            resumable = true;
          }
          if (copy == null || copy.applies(RecordJournal.slotOf(args), at)) {
            apply(args); // else in the copy already, or its slot's copy is still to come
          }
        }
        offset = at + rec.end() - rec.start(); // once applied: a failover waiting for it sees it done
      }
      if (watched) {
        synchronized (progress) {
          progress.notifyAll();
        }
      }
      long now = clock.getAsLong();
      if (synced && (in.available() == 0 || now - lastAck >= ACK_MILLIS)) {
        c.send(List.of(b("REPLCONF"), b("ACK"), b(Long.toString(offset))));
        c.flush();
        lastAck = now;
      }
    }
  }

  /**
   * Applies one record; one that does not apply (a setting lower here than on the primary, say)
   * ends the link, and the next one takes a full copy rather than meet the same record again.
   */
  private void apply(byte[][] args) throws IOException {
    try {
      applier.apply(args);
    } catch (RuntimeException e) {
      resumable = false;
      synced = false;
      throw new IOException("a record of the stream does not apply ('" + new String(args[0], StandardCharsets.UTF_8)
          + "': " + e.getMessage() + "); the next link takes a full copy", e);
    }
  }

  private static byte[] b(String s) {
    return s.getBytes(StandardCharsets.UTF_8);
  }
}
