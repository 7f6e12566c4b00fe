package io.atoll.server.demo;

import io.atoll.runtime.Entity;
import io.atoll.runtime.EntityContext;
import io.atoll.runtime.EntityFactory;
import io.atoll.runtime.EntityType;
import java.time.Duration;
import java.util.concurrent.TimeUnit;

/**
 * The demo's entity: a bank account. With a database it keeps its balance there, written with its
 * fencing token; without one it keeps it in memory (lost when the account moves).
 */
public final class Account implements Entity<AccountMsg> {

  /** The entity type: ends with {@link AccountMsg.Stop}, passivated after a minute idle. */
  public static final EntityType<AccountMsg> TYPE = EntityType.of("account", AccountMsg.class)
      .withTerminationMessage(new AccountMsg.Stop())
      .withIdleTime(Duration.ofMinutes(1));

  private final AccountDb db;
  private final EntityContext ctx;
  private final String pod;
  private final long activation;
  private long balance;

  private Account(AccountDb db, EntityContext ctx, AccountDb.Activation a) {
    this.db = db;
    this.ctx = ctx;
    this.pod = ctx.pod().toString();
    this.activation = a.id();
    this.balance = a.balance();
  }

  /**
   * Activations that load and claim their account in {@code db} (or keep memory only, if null),
   * logging their start, their writes and their graceful end in its activation log.
   */
  public static EntityFactory<AccountMsg> factory(AccountDb db) {
    return ctx -> new Account(db, ctx, db == null ? new AccountDb.Activation(0, 0)
        : db.activate(ctx.entityId(), ctx.token(), ctx.pod().toString(), AccountDb.nowMicros()));
  }

  @Override
  public void onMessage(AccountMsg msg, EntityContext context) throws Exception {
    switch (msg) {
      case AccountMsg.Deposit d -> {
        long started = AccountDb.nowMicros();
        if (db == null || db.deposit(ctx.entityId(), d.opId(), d.amount(), ctx.token(), pod, activation, started)) {
          balance += d.amount();
        }
      }
      case AccountMsg.SlowDeposit d -> {
        long started = AccountDb.nowMicros();
        TimeUnit.MILLISECONDS.sleep(d.stallMillis()); // the stall is the point: a handler slower than its asker
        if (db == null || db.deposit(ctx.entityId(), d.opId(), d.amount(), ctx.token(), pod, activation, started)) {
          balance += d.amount();
        }
        d.reply().send(true);
      }
      case AccountMsg.Balance b -> b.reply().send(balance);
      case AccountMsg.Stop s -> {
        if (db != null) {
          db.stopped(activation);
        }
      }
    }
  }
}
