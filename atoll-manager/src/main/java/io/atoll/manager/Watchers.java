package io.atoll.manager;

import io.atoll.core.ClusterConfig;
import io.atoll.transport.grpc.Wire;
import io.atoll.transport.grpc.proto.ConfigBytes;
import io.grpc.stub.ServerCallStreamObserver;
import java.util.ArrayList;
import java.util.List;
import java.util.function.Function;

/**
 * The open {@code Watch} streams. Each gets the installed config when it opens and every config
 * installed after; a slow stream gets only the newest config not yet sent, never a backlog.
 *
 * <p>Loop-confined: stream callbacks (ready, cancel) are posted to the loop.
 */
@GuardedBy("loop")
final class Watchers {

  private final Loop loop;
  private final Function<ClusterConfig, ConfigBytes> encoder;
  private final List<Watcher> watchers = new ArrayList<>();
  private boolean closed;

  Watchers(Loop loop) {
    this(loop, Wire::bytes);
  }

  /** Watchers that send each config as {@code encoder} makes it (signed by the manager's key). */
  Watchers(Loop loop, Function<ClusterConfig, ConfigBytes> encoder) {
    this.loop = loop;
    this.encoder = encoder;
  }

  /** Registers a stream (any thread); it first gets {@code current}'s value at the time it is added. */
  void add(ServerCallStreamObserver<ConfigBytes> observer, java.util.function.Supplier<ClusterConfig> current) {
    Watcher w = new Watcher(observer);
    observer.setOnCancelHandler(() -> loop.execute(() -> watchers.remove(w)));
    observer.setOnReadyHandler(() -> loop.execute(w::flush));
    loop.execute(() -> {
      if (closed) {
        observer.onCompleted();
        return;
      }
      watchers.add(w);
      w.pending = encoder.apply(current.get());
      w.flush();
    });
  }

  /** Sends {@code c} to every stream. Loop only. */
  void publish(ClusterConfig c) {
    loop.checkOnLoop();
    if (watchers.isEmpty()) {
      return;
    }
    ConfigBytes bytes = encoder.apply(c);
    for (Watcher w : watchers) {
      w.pending = bytes;
      w.flush();
    }
  }

  /** Completes every stream and refuses new ones. Loop only. */
  void close() {
    closed = true;
    for (Watcher w : watchers) {
      try {
        w.observer.onCompleted();
      } catch (RuntimeException e) {
        // already gone
      }
    }
    watchers.clear();
  }

  /** One watch stream; the newest config not yet sent replaces older ones. */
  private static final class Watcher {
    final ServerCallStreamObserver<ConfigBytes> observer;
    ConfigBytes pending;

    Watcher(ServerCallStreamObserver<ConfigBytes> observer) {
      this.observer = observer;
    }

    void flush() {
      if (pending != null && !observer.isCancelled() && observer.isReady()) {
        try {
          observer.onNext(pending);
        } catch (RuntimeException e) {
          // the stream is gone; its cancel handler removes it
        }
        pending = null;
      }
    }
  }
}
