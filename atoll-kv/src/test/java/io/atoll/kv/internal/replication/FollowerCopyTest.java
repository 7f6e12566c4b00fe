package io.atoll.kv.internal.replication;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.atoll.core.slots.KeySlots;
import io.atoll.kv.internal.store.Entry;
import io.atoll.kv.internal.store.Key;
import io.atoll.kv.internal.store.SlotStore;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * A replica taking a full copy again replaces each slot when that slot's copy arrives, never all
 * at once at the start: a primary that dies part way through the copy (and whose replica is then
 * promoted) leaves every slot whole, either as the replica held it or as the copy sent it. The
 * primary's side is scripted over a real socket: it answers the replica's handshake, sends
 * {@code +FULLRESYNC}, the copy of one slot, and then nothing more.
 */
class FollowerCopyTest {
  private static final String PRIMARY_ID = "a".repeat(40);

  /** One record of the stream, framed as the primary frames it (the append-only file's records). */
  private static byte[] record(String... args) {
    io.atoll.kv.internal.persist.LogBuffer b = new io.atoll.kv.internal.persist.LogBuffer(256);
    b.record(java.util.Arrays.stream(args).map(a -> a.getBytes(StandardCharsets.UTF_8)).toArray(byte[][]::new));
    java.nio.ByteBuffer v = b.view();
    byte[] out = new byte[v.remaining()];
    v.get(out);
    return out;
  }

  /** Reads one RESP array of bulk strings (what the replica sends) and returns its first element. */
  private static String readCommand(InputStream in) throws IOException {
    String head = line(in);
    int n = Integer.parseInt(head.substring(1));
    String first = null;
    for (int i = 0; i < n; i++) {
      int len = Integer.parseInt(line(in).substring(1));
      String arg = new String(in.readNBytes(len), StandardCharsets.UTF_8);
      in.readNBytes(2);
      first = first == null ? arg : first;
    }
    return first;
  }

  private static String line(InputStream in) throws IOException {
    StringBuilder b = new StringBuilder();
    int c;
    while ((c = in.read()) != '\n') {
      if (c < 0) {
        throw new IOException("closed");
      }
      if (c != '\r') {
        b.append((char) c);
      }
    }
    return b.toString();
  }

  /** The {@code nth} key (from 0) of the form k<i> in {@code slot}. */
  private static String keyOf(int slot, int nth) {
    int seen = 0;
    for (int i = 0; ; i++) {
      String k = "k" + i;
      if (KeySlots.slotOf(k) == slot && seen++ == nth) {
        return k;
      }
    }
  }

  @Test
  void aSlotKeepsWhatTheReplicaHeldUntilItsCopyArrives() throws Exception {
    SlotStore store = new SlotStore();
    String old0 = keyOf(0, 0);
    String old1 = keyOf(1, 0);
    store.slot(0).put(new Key(old0.getBytes(StandardCharsets.UTF_8)), new Entry(new byte[] {'o'}));
    store.slot(1).put(new Key(old1.getBytes(StandardCharsets.UTF_8)), new Entry(new byte[] {'o'}));
    String copied = keyOf(0, 1);
    CountDownLatch sent = new CountDownLatch(1);
    CountDownLatch done = new CountDownLatch(1);
    try (ServerSocket server = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
      Thread primary = Thread.ofPlatform().start(() -> {
        try (Socket s = server.accept()) {
          InputStream in = s.getInputStream();
          OutputStream out = s.getOutputStream();
          assertThat(readCommand(in)).isEqualToIgnoringCase("CLUSTER");
          out.write(("$40\r\n" + PRIMARY_ID + "\r\n").getBytes(StandardCharsets.US_ASCII));
          out.flush();
          assertThat(readCommand(in)).isEqualToIgnoringCase("REPLCONF");
          assertThat(readCommand(in)).isEqualToIgnoringCase("PSYNC");
          out.write("+OK\r\n".getBytes(StandardCharsets.US_ASCII));
          out.write(("+FULLRESYNC " + "b".repeat(40) + " 0\r\n").getBytes(StandardCharsets.US_ASCII));
          // The copy of slot 0 (one key, taken at stream offset 0), then the primary goes quiet.
          out.write(record(Feed.SYNCSLOT, "0", "0", "1"));
          out.write(record("SET", copied, "n"));
          out.flush();
          sent.countDown();
          done.await(30, TimeUnit.SECONDS);
        } catch (IOException | InterruptedException e) {
          throw new IllegalStateException(e);
        }
      });
      Follower f = new Follower("127.0.0.1", server.getLocalPort(), PRIMARY_ID, null, 1, 1 << 20, 5000, store,
          args -> store.slot(KeySlots.slotOf(args[1])).put(new Key(args[1]), new Entry(args[2])),
          System::currentTimeMillis);
      Thread.ofPlatform().daemon(true).start(f);
      assertThat(sent.await(10, TimeUnit.SECONDS)).isTrue();
      await().atMost(Duration.ofSeconds(10)).until(() ->
          store.slot(0).get(new Key(copied.getBytes(StandardCharsets.UTF_8)), 0) != null);
      assertThat(store.slot(0).get(new Key(old0.getBytes(StandardCharsets.UTF_8)), 0))
          .as("slot 0 is the copy's").isNull();
      assertThat(store.slot(1).get(new Key(old1.getBytes(StandardCharsets.UTF_8)), 0))
          .as("slot 1, whose copy has not arrived, is what the replica held").isNotNull();
      f.stop();
      done.countDown();
      primary.join(10_000);
    }
  }
}
