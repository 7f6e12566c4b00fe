package io.atoll.runtime.internal.util;

import io.atoll.core.FencingToken;
import io.atoll.runtime.DeliveryException;
import io.atoll.runtime.ShardingObserver;
import java.util.concurrent.atomic.AtomicLong;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A user's {@link ShardingObserver} that may break its contract and throw: each call is passed on,
 * and whatever it throws is logged (the first time, then every 10,000th) and goes no further. An
 * observer's bug costs its own reports, never a message, an entity's drain or a hand-off. The
 * calls run on the pod's threads, often inside its locks: each marks its thread ({@link Draining}),
 * so that a send the observer makes never runs a handler there. Thread-safe if the observer is.
 */
public final class GuardedObserver implements ShardingObserver {

  private static final Logger log = LoggerFactory.getLogger(GuardedObserver.class);

  private final ShardingObserver observer;
  private final AtomicLong failures = new AtomicLong();

  private GuardedObserver(ShardingObserver observer) {
    this.observer = observer;
  }

  /** {@code observer} guarded ({@link ShardingObserver#NONE} and guarded ones as they are). */
  public static ShardingObserver of(ShardingObserver observer) {
    return observer == ShardingObserver.NONE || observer instanceof GuardedObserver ? observer
        : new GuardedObserver(observer);
  }

  private void failed(String call, Throwable t) {
    if (t instanceof VirtualMachineError e) {
      throw e;
    }
    long n = failures.incrementAndGet();
    if (n == 1 || n % 10_000 == 0) {
      log.warn("observer {} threw from {} ({} times so far; observers must not throw): {}",
          observer.getClass().getName(), call, n, t.toString(), t);
    }
  }

  @Override
  public void shardActivated(int shard, long epoch) {
    boolean[] mark = Draining.enter();
    try {
      observer.shardActivated(shard, epoch);
    } catch (Throwable t) {
      failed("shardActivated", t);
    } finally {
      Draining.exit(mark);
    }
  }

  @Override
  public void shardReleased(int shard) {
    boolean[] mark = Draining.enter();
    try {
      observer.shardReleased(shard);
    } catch (Throwable t) {
      failed("shardReleased", t);
    } finally {
      Draining.exit(mark);
    }
  }

  @Override
  public void entityActivated(String type, String entityId, FencingToken token) {
    boolean[] mark = Draining.enter();
    try {
      observer.entityActivated(type, entityId, token);
    } catch (Throwable t) {
      failed("entityActivated", t);
    } finally {
      Draining.exit(mark);
    }
  }

  @Override
  public void entityDeactivated(String type, String entityId, FencingToken token) {
    boolean[] mark = Draining.enter();
    try {
      observer.entityDeactivated(type, entityId, token);
    } catch (Throwable t) {
      failed("entityDeactivated", t);
    } finally {
      Draining.exit(mark);
    }
  }

  @Override
  public void fenced() {
    boolean[] mark = Draining.enter();
    try {
      observer.fenced();
    } catch (Throwable t) {
      failed("fenced", t);
    } finally {
      Draining.exit(mark);
    }
  }

  @Override
  public void messageRefused(String type, io.atoll.runtime.OverloadCause cause) {
    boolean[] mark = Draining.enter();
    try {
      observer.messageRefused(type, cause);
    } catch (Throwable t) {
      failed("messageRefused", t);
    } finally {
      Draining.exit(mark);
    }
  }

  @Override
  public void messageSent() {
    boolean[] mark = Draining.enter();
    try {
      observer.messageSent();
    } catch (Throwable t) {
      failed("messageSent", t);
    } finally {
      Draining.exit(mark);
    }
  }

  @Override
  public void messageHandled(boolean ask, long nanos) {
    boolean[] mark = Draining.enter();
    try {
      observer.messageHandled(ask, nanos);
    } catch (Throwable t) {
      failed("messageHandled", t);
    } finally {
      Draining.exit(mark);
    }
  }

  @Override
  public void messageFailed(DeliveryException.Reason reason) {
    boolean[] mark = Draining.enter();
    try {
      observer.messageFailed(reason);
    } catch (Throwable t) {
      failed("messageFailed", t);
    } finally {
      Draining.exit(mark);
    }
  }

  @Override
  public void notOwnerRetry() {
    boolean[] mark = Draining.enter();
    try {
      observer.notOwnerRetry();
    } catch (Throwable t) {
      failed("notOwnerRetry", t);
    } finally {
      Draining.exit(mark);
    }
  }
}
