package io.atoll.server.demo;

import io.atoll.runtime.DeliveryException;
import io.atoll.runtime.Sharding;
import java.util.SplittableRandom;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;

/**
 * Steady open-loop load on the demo's statements: at {@code rate} lines per second (at most
 * {@code concurrency} in flight) to the statements of random accounts, and every fiftieth message a
 * total asked back that must show at least every line acknowledged before it was sent. It keeps its
 * own {@link Ledger} (statement ids in place of accounts) and backs off on OVERLOADED as
 * {@link Load} does.
 */
final class StatementLoad {

  private final Sharding client;
  private final Ledger ledger;
  private final int statements;
  private final int concurrency;
  private final int rate;
  private final Semaphore permits;
  private volatile boolean running = true;
  private Thread thread;

  /** Load from {@code client} over {@code statements} statements, recorded in {@code ledger}. */
  StatementLoad(Sharding client, Ledger ledger, int statements, int concurrency, int rate) {
    if (statements < 1 || concurrency < 1 || rate < 1) {
      throw new IllegalArgumentException("statements " + statements + ", concurrency " + concurrency + ", rate " + rate
          + " (expected: all >= 1)");
    }
    this.client = client;
    this.ledger = ledger;
    this.statements = statements;
    this.concurrency = concurrency;
    this.rate = rate;
    this.permits = new Semaphore(concurrency);
  }

  /** Starts sending. */
  StatementLoad start() {
    thread = Thread.ofPlatform().name("atoll-demo-statements").daemon().start(this::run);
    return this;
  }

  private void run() {
    SplittableRandom rnd = new SplittableRandom(7);
    Pacer pace = new Pacer(rate, System.nanoTime());
    long op = 0;
    while (running) {
      if (!pace.trySend(System.nanoTime())) {
        LockSupport.parkNanos(1_000_000); // pacing the send rate
        continue;
      }
      try {
        if (!permits.tryAcquire(100, TimeUnit.MILLISECONDS)) {
          continue;
        }
      } catch (InterruptedException e) {
        return;
      }
      String id = "acct-" + rnd.nextInt(statements);
      if (++op % 50 == 0) {
        long floor = ledger.ackedSum(id);
        client.entity(Statement.TYPE, id).<Long>ask(StatementMsg.Total::new).whenComplete((total, e) -> {
          if (e == null) {
            ledger.reads.increment();
            if (total < floor) {
              ledger.staleReads.increment();
            }
          }
          permits.release();
        });
        continue;
      }
      long opId = op;
      long amount = 1 + rnd.nextInt(100);
      ledger.sent();
      client.entity(Statement.TYPE, id).tell(new StatementMsg.Entry(opId, amount)).whenComplete((v, e) -> {
        if (e == null) {
          ledger.acked(opId, id, amount);
        } else if (ledger.failed(opId, e) == DeliveryException.Reason.OVERLOADED) {
          pace.overloaded(System.nanoTime());
        }
        permits.release();
      });
    }
  }

  /** Stops sending and waits up to {@code timeoutMillis} for what is in flight. */
  void stop(long timeoutMillis) throws InterruptedException {
    running = false;
    if (thread != null) {
      thread.join();
    }
    if (permits.tryAcquire(concurrency, timeoutMillis, TimeUnit.MILLISECONDS)) {
      permits.release(concurrency);
    }
  }
}
