package io.atoll.server.demo;

import io.atoll.runtime.Entity;
import io.atoll.runtime.EntityContext;
import io.atoll.runtime.EntityFactory;
import io.atoll.runtime.EntityType;
import java.time.Duration;

/**
 * The demo's second entity type: an account's statement, the lines booked on it and their total.
 * It lives in its own shard space, on pods of the role {@value #ROLE} only ({@code atoll pod --role
 * statements}), so the accounts' pods never host it and its pods never host accounts. With a
 * database it keeps its lines there, written with its fencing token ({@link StatementDb}); without
 * one it keeps its total in memory (lost when the statement moves).
 */
public final class Statement implements Entity<StatementMsg> {

  /** The role whose pods host statements, and the name of its shard space. */
  public static final String ROLE = "statements";

  /** The entity type: on role {@value #ROLE}, ends with {@link StatementMsg.Stop}, passivated after a minute idle. */
  public static final EntityType<StatementMsg> TYPE = EntityType.of("statement", StatementMsg.class)
      .withTerminationMessage(new StatementMsg.Stop())
      .withIdleTime(Duration.ofMinutes(1))
      .onRole(ROLE);

  private final StatementDb db;
  private final EntityContext ctx;
  private final String pod;
  private final long activation;
  private long total;

  private Statement(StatementDb db, EntityContext ctx, StatementDb.Activation a) {
    this.db = db;
    this.ctx = ctx;
    this.pod = ctx.pod().toString();
    this.activation = a.id();
    this.total = a.total();
  }

  /** Activations that load and claim their statement in {@code db} (or keep memory only, if null). */
  public static EntityFactory<StatementMsg> factory(StatementDb db) {
    return ctx -> new Statement(db, ctx, db == null ? new StatementDb.Activation(0, 0)
        : db.activate(ctx.entityId(), ctx.token(), ctx.pod().toString(), AccountDb.nowMicros()));
  }

  @Override
  public void onMessage(StatementMsg msg, EntityContext context) throws Exception {
    switch (msg) {
      case StatementMsg.Entry e -> {
        long started = AccountDb.nowMicros();
        if (db == null || db.book(ctx.entityId(), e.opId(), e.amount(), ctx.token(), pod, activation, started)) {
          total += e.amount();
        }
      }
      case StatementMsg.Total t -> t.reply().send(total);
      case StatementMsg.Stop s -> {
        if (db != null) {
          db.stopped(activation);
        }
      }
    }
  }
}
