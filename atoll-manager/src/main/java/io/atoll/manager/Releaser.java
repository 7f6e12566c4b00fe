package io.atoll.manager;

import io.atoll.core.spi.AssignmentStore;
import io.atoll.manager.pods.Pods;
import io.grpc.Server;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicBoolean;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Releases, once, what a stopping manager holds off its loop: its gRPC server, the calls to pods,
 * its threads, and the store; then completes {@code stopped} (normally, unless a deposition
 * completed it first). A second call, such as a close after a deposition, waits for the first, so
 * that the port is free when it returns. Thread-safe.
 */
final class Releaser {

  private static final Logger log = LoggerFactory.getLogger(Releaser.class);

  private final Pods pods;
  private final Runnable onClose;
  private final AssignmentStore store;
  private final CompletableFuture<Void> stopped;
  private final AtomicBoolean releasing = new AtomicBoolean();
  private final CompletableFuture<Void> released = new CompletableFuture<>();
  private volatile Server server;

  /**
   * @param onClose releases what the manager's creator made for it (threads), after the pods and
   *     before the store
   * @param stopped completed once everything is released
   */
  Releaser(Pods pods, Runnable onClose, AssignmentStore store, CompletableFuture<Void> stopped) {
    this.pods = pods;
    this.onClose = onClose;
    this.store = store;
    this.stopped = stopped;
  }

  /** The server to shut down first, once it listens. */
  void server(Server s) {
    server = s;
  }

  /** Releases everything, once; a later call waits (up to 10 s) for the first to finish. */
  void release() {
    if (!releasing.compareAndSet(false, true)) {
      try {
        released.get(10, TimeUnit.SECONDS);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
      } catch (ExecutionException | TimeoutException e) {
        log.warn("shard manager: releasing its resources did not finish: {}", e.toString());
      }
      return;
    }
    try {
      releaseOnce();
    } finally {
      released.complete(null);
    }
  }

  private void releaseOnce() {
    Server s = server;
    if (s != null) {
      // Gracefully first: the watch streams the manager just completed reach their clients as
      // completed, not cut (a shutdownNow right away reset some: RST_STREAM CANCEL); whatever is
      // still open after a moment is cut.
      s.shutdown();
      try {
        if (!s.awaitTermination(250, TimeUnit.MILLISECONDS)) {
          s.shutdownNow();
          s.awaitTermination(5, TimeUnit.SECONDS);
        }
      } catch (InterruptedException e) {
        s.shutdownNow();
        Thread.currentThread().interrupt();
      }
    }
    pods.close();
    onClose.run();
    store.close();
    stopped.complete(null);
  }
}
