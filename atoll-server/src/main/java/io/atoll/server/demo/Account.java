package io.atoll.server.demo;

import io.atoll.runtime.Entity;
import io.atoll.runtime.EntityContext;
import io.atoll.runtime.EntityFactory;
import io.atoll.runtime.EntityType;
import java.time.Duration;

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
  private long balance;

  private Account(AccountDb db, EntityContext ctx, long balance) {
    this.db = db;
    this.ctx = ctx;
    this.pod = ctx.pod().toString();
    this.balance = balance;
  }

  /** Activations that load and claim their account in {@code db} (or keep memory only, if null). */
  public static EntityFactory<AccountMsg> factory(AccountDb db) {
    return ctx -> new Account(db, ctx,
        db == null ? 0 : db.activate(ctx.entityId(), ctx.token(), ctx.pod().toString()));
  }

  @Override
  public void onMessage(AccountMsg msg, EntityContext context) throws Exception {
    switch (msg) {
      case AccountMsg.Deposit d -> {
        long started = System.currentTimeMillis();
        if (db == null || db.deposit(ctx.entityId(), d.opId(), d.amount(), ctx.token(), pod, started)) {
          balance += d.amount();
        }
      }
      case AccountMsg.Balance b -> b.reply().send(balance);
      case AccountMsg.Stop s -> { }
    }
  }
}
