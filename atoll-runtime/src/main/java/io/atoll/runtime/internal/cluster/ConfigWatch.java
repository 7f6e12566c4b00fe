package io.atoll.runtime.internal.cluster;

import io.atoll.core.PodAddress;
import io.atoll.runtime.internal.util.BackoffPolicy;
import io.atoll.transport.grpc.Wire;
import io.atoll.transport.grpc.proto.ConfigBytes;
import io.atoll.transport.grpc.proto.ShardManagerServiceGrpc;
import io.atoll.transport.grpc.proto.WatchRequest;
import io.grpc.ManagedChannel;
import io.grpc.stub.ClientCallStreamObserver;
import io.grpc.stub.ClientResponseObserver;
import java.time.Duration;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The pod's watch on the manager's configs: one Watch stream at a time to the current manager,
 * each config checked ({@link SignedConfigs}) and handed to the {@link View}; after the stream
 * breaks or ends, it watches again after a back-off (100 ms doubling to 2 s), on another manager if
 * that one failed. Thread-safe.
 */
final class ConfigWatch {

  private static final Logger log = LoggerFactory.getLogger(ConfigWatch.class);
  /** Pause before watching again after the watch broke. */
  static final BackoffPolicy WATCH_BACKOFF =
      BackoffPolicy.exponential(Duration.ofMillis(100), Duration.ofSeconds(2));

  private final ManagerAddresses managers;
  private final View view;
  private final SignedConfigs configs;
  private final ScheduledExecutorService timer;
  private volatile ClientCallStreamObserver<WatchRequest> watchCall;
  private volatile long watchBackoffNanos;
  private volatile boolean closed;
  private final java.util.concurrent.atomic.AtomicInteger ended = new java.util.concurrent.atomic.AtomicInteger();

  /** @param timer runs the watches again; shut down by its owner */
  ConfigWatch(ManagerAddresses managers, View view, SignedConfigs configs, ScheduledExecutorService timer) {
    this.managers = managers;
    this.view = view;
    this.configs = configs;
    this.timer = timer;
  }

  /** Follows the manager's configs, reconnecting after failures (to another manager if one failed). */
  void watch() {
    if (closed) {
      return;
    }
    PodAddress at = managers.current();
    ManagedChannel on = managers.channel();
    try {
      managers.readyStub(ShardManagerServiceGrpc.newStub(Wire.reconnecting(on)))
          .watch(WatchRequest.newBuilder().setPod(Wire.ref(view.self())).build(),
          new ClientResponseObserver<WatchRequest, ConfigBytes>() {
            @Override
            public void beforeStart(ClientCallStreamObserver<WatchRequest> call) {
              watchCall = call;
            }

            @Override
            public void onNext(ConfigBytes b) {
              watchBackoffNanos = 0;
              managers.answered(at);
              try {
                // no term on this stream: it may not change the key (a deposed manager's old stream)
                view.onManagerConfig(configs.fromManager(b, false));
              } catch (RuntimeException e) {
                log.warn("pod {}: ignored a config from the manager: {}", view.self(), e.getMessage());
              }
            }

            @Override
            public void onError(Throwable t) {
              ended.incrementAndGet();
              if (closed) {
                return; // our own cancel at close: says nothing about the manager
              }
              managers.failed(on, at, t); // not if the channel was replaced under the watch
              rewatch();
            }

            @Override
            public void onCompleted() {
              ended.incrementAndGet();
              rewatch();
            }
          });
    } catch (RuntimeException e) {
      rewatch();
    }
  }

  private void rewatch() {
    if (closed) {
      return;
    }
    long wait = WATCH_BACKOFF.nextNanos(watchBackoffNanos);
    watchBackoffNanos = wait;
    try {
      timer.schedule(this::watch, wait, TimeUnit.NANOSECONDS);
    } catch (RejectedExecutionException e) {
      // closed
    }
  }

  /** How many watch streams have ended (broken or completed), for tests. */
  int streamsEnded() {
    return ended.get();
  }

  /** Stops watching: cancels the stream and watches no more. */
  void close() {
    closed = true;
    ClientCallStreamObserver<WatchRequest> w = watchCall;
    if (w != null) {
      w.cancel("pod closing", null);
    }
  }
}
