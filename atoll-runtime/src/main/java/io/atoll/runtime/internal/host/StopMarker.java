package io.atoll.runtime.internal.host;

import io.atoll.runtime.DeliveryException;
import io.atoll.runtime.Reply;
import io.atoll.runtime.internal.codec.NoReply;
import java.util.concurrent.CountDownLatch;

/**
 * The last item of an activation's mailbox: run the termination message, then end the activation.
 * For a hand-off ({@code release}) the instance closes and refuses everything after it; for
 * passivation it ends only if nothing else is waiting.
 */
final class StopMarker implements Delivery {

  final boolean release;
  final CountDownLatch done;
  private Delivery next;

  StopMarker(boolean release, CountDownLatch done) {
    this.release = release;
    this.done = done;
  }

  void finished() {
    if (done != null) {
      done.countDown();
    }
  }

  @Override
  public Object message() {
    return null;
  }

  @Override
  public boolean isAsk() {
    return false;
  }

  @Override
  public long deadlineNanos() {
    return Long.MAX_VALUE;
  }

  @Override
  public boolean isDone() {
    return false;
  }

  @Override
  public void handled() {}

  @Override
  public void failed(DeliveryException e) {}

  @Override
  public void bounce() {}

  @Override
  public Reply<Object> reply() {
    return NoReply.INSTANCE;
  }

  @Override
  public Delivery next() {
    return next;
  }

  @Override
  public void next(Delivery d) {
    next = d;
  }
}
