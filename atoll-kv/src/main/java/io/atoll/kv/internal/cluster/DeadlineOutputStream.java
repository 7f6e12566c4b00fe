package io.atoll.kv.internal.cluster;

import java.io.IOException;
import java.io.OutputStream;
import java.net.Socket;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;

/**
 * A socket's output with a write deadline: a socket's timeout covers reads only, so a peer that
 * stops reading (its receive window at zero) would block a write forever, and a hand-off's write
 * blocks holding its slot's lock. Each piece of at most {@link #PIECE} bytes must be written within
 * the timeout, else a watchdog closes the socket, which turns the stuck write into an IOException
 * (a hand-off then holds the batch's keys, as for a read that timed out). Pieces bound the wait by
 * progress, not by the size of a value.
 */
final class DeadlineOutputStream extends OutputStream {
  static final int PIECE = 64 << 10;
  private static final ScheduledExecutorService WATCHDOG = java.util.concurrent.Executors
      .newSingleThreadScheduledExecutor(r -> {
        Thread t = new Thread(r, "kv-write-deadline");
        t.setDaemon(true);
        return t;
      });

  private final Socket socket;
  private final OutputStream out;
  private final long timeoutMillis;
  private volatile boolean expired;

  DeadlineOutputStream(Socket socket, long timeoutMillis) throws IOException {
    this.socket = socket;
    this.out = socket.getOutputStream();
    this.timeoutMillis = timeoutMillis;
  }

  @Override
  public void write(int b) throws IOException {
    write(new byte[] {(byte) b}, 0, 1);
  }

  @Override
  public void write(byte[] b, int off, int len) throws IOException {
    if (timeoutMillis <= 0) {
      out.write(b, off, len); // no timeout asked for (as for reads: 0 waits forever)
      return;
    }
    for (int done = 0; done < len;) {
      int n = Math.min(PIECE, len - done);
      ScheduledFuture<?> watchdog = WATCHDOG.schedule(this::expire, timeoutMillis, TimeUnit.MILLISECONDS);
      try {
        out.write(b, off + done, n);
      } catch (IOException e) {
        throw expired ? new IOException("write timed out after " + timeoutMillis + " ms (the peer stopped"
            + " reading; expected: it reads within the timeout)", e) : e;
      } finally {
        watchdog.cancel(false);
      }
      done += n;
    }
  }

  private void expire() {
    expired = true;
    try {
      socket.close();
    } catch (IOException e) {
      // closing is all the watchdog can do; the blocked write fails either way
    }
  }

  @Override
  public void flush() throws IOException {
    out.flush();
  }

  @Override
  public void close() throws IOException {
    out.close();
  }
}
