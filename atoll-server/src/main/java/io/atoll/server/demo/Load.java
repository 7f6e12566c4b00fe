package io.atoll.server.demo;

import io.atoll.runtime.Sharding;
import java.util.SplittableRandom;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Steady load on the demo service from a client: deposits (tells) to random accounts, and every so
 * often a balance ask that must show at least every deposit acknowledged before it was sent
 * (read-your-acknowledged-writes). With a rate it is open-loop: it sends that many per second
 * whatever happens to earlier messages (up to {@code concurrency} in flight), so traffic to healthy
 * shards goes on while a dead pod's shards wait; with rate 0 it keeps {@code concurrency} in flight.
 * An open-loop load backs off when pods refuse deposits as overloaded (see {@link Pacer}) and comes
 * back to its rate when they stop.
 */
public final class Load {

  private final Sharding client;
  private final Ledger ledger;
  private final int accounts;
  private final int concurrency;
  private final Semaphore permits;
  private final AtomicLong nextOp;
  private volatile boolean running = true;
  private Thread thread;

  private final int rate;
  private volatile Pacer pacer;
  private final Deposits deposits;

  /** Hears of each deposit as it leaves and as it ends (from the thread that completes it). */
  public interface Deposits {
    /** Nobody listens. */
    Deposits NONE = new Deposits() {
      @Override
      public void sent(String account, long sentAt) {
      }

      @Override
      public void ended(String account, long sentAt, boolean acked) {
      }
    };

    /** A deposit to {@code account} leaves at {@code sentAt} ({@link System#nanoTime()}). */
    void sent(String account, long sentAt);

    /** That deposit ended now: acknowledged, or not (refused, timed out, failed). */
    void ended(String account, long sentAt, boolean acked);
  }

  /** Closed-loop load from {@code client} over {@code accounts} accounts; op ids start at {@code firstOp}. */
  public Load(Sharding client, Ledger ledger, int accounts, int concurrency, long firstOp) {
    this(client, ledger, accounts, concurrency, firstOp, 0);
  }

  /** Load at {@code rate} messages per second (0: closed loop), at most {@code concurrency} in flight. */
  public Load(Sharding client, Ledger ledger, int accounts, int concurrency, long firstOp, int rate) {
    this(client, ledger, accounts, concurrency, firstOp, rate, Deposits.NONE);
  }

  /** As above, telling {@code deposits} of each deposit sent and ended. */
  public Load(Sharding client, Ledger ledger, int accounts, int concurrency, long firstOp, int rate,
      Deposits deposits) {
    this.deposits = deposits;
    this.rate = rate;
    this.client = client;
    this.ledger = ledger;
    this.accounts = accounts;
    this.concurrency = concurrency;
    this.permits = new Semaphore(concurrency);
    this.nextOp = new AtomicLong(firstOp);
  }

  /** Starts sending. */
  public Load start() {
    thread = Thread.ofPlatform().name("atoll-demo-load").daemon().start(this::run);
    return this;
  }

  private void run() {
    SplittableRandom rnd = new SplittableRandom(42);
    long n = 0;
    Pacer pace = rate > 0 ? new Pacer(rate, System.nanoTime()) : null;
    pacer = pace;
    while (running) {
      if (pace != null && !pace.trySend(System.nanoTime())) {
        java.util.concurrent.locks.LockSupport.parkNanos(200_000); // pacing the send rate
        continue;
      }
      try {
        if (!permits.tryAcquire(100, TimeUnit.MILLISECONDS)) {
          continue;
        }
      } catch (InterruptedException e) {
        return;
      }
      String account = "acct-" + rnd.nextInt(accounts);
      if (++n % 50 == 0) {
        long floor = ledger.ackedSum(account);
        client.entity(Account.TYPE, account).<Long>ask(AccountMsg.Balance::new).whenComplete((balance, e) -> {
          if (e == null) {
            ledger.reads.increment();
            if (balance < floor) {
              ledger.staleReads.increment();
            }
          }
          permits.release();
        });
        continue;
      }
      long op = nextOp.getAndIncrement();
      long amount = 1 + rnd.nextInt(100);
      ledger.sent();
      long sentAt = System.nanoTime();
      deposits.sent(account, sentAt);
      client.entity(Account.TYPE, account).tell(new AccountMsg.Deposit(op, amount)).whenComplete((v, e) -> {
        ledger.outcomes.record(sentAt, System.nanoTime(), e);
        deposits.ended(account, sentAt, e == null);
        if (e == null) {
          ledger.acked(op, account, amount);
        } else if (ledger.failed(op, e) == io.atoll.runtime.DeliveryException.Reason.OVERLOADED && pace != null) {
          pace.overloaded(System.nanoTime());
        }
        permits.release();
      });
    }
  }

  /** The id the next deposit would get: a later load starts there. */
  public long nextOp() {
    return nextOp.get();
  }

  /** The send rate now (lower than asked while pods refuse deposits as overloaded); 0 for a closed loop. */
  public int pace() {
    Pacer p = pacer;
    return p == null ? 0 : p.rate();
  }

  /** Stops sending and waits up to {@code timeoutMillis} for what is in flight. */
  public void stop(long timeoutMillis) throws InterruptedException {
    running = false;
    if (thread != null) {
      thread.join();
    }
    if (permits.tryAcquire(concurrency, timeoutMillis, TimeUnit.MILLISECONDS)) {
      permits.release(concurrency);
    }
  }
}
