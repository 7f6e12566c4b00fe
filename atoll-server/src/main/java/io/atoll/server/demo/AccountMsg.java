package io.atoll.server.demo;

import io.atoll.runtime.Reply;

/** The messages of the demo's bank-account entity. */
public sealed interface AccountMsg permits AccountMsg.Deposit, AccountMsg.SlowDeposit, AccountMsg.Balance,
    AccountMsg.Stop {

  /**
   * Adds {@code amount} to the balance, once: {@code opId} is unique per deposit. Sent with tell;
   * its acknowledgement means the deposit is in the database.
   */
  record Deposit(long opId, long amount) implements AccountMsg {}

  /**
   * A deposit whose handler first stalls for {@code stallMillis} (a slow database, a long GC),
   * holding the entity's mailbox, then deposits as {@link Deposit} does and answers true: the chaos
   * run's slow handler, asked with a timeout shorter than the stall.
   */
  record SlowDeposit(long opId, long amount, long stallMillis, Reply<Boolean> reply) implements AccountMsg {}

  /** Answers the balance as the entity holds it. */
  record Balance(Reply<Long> reply) implements AccountMsg {}

  /** The termination message: the activation ends. */
  record Stop() implements AccountMsg {}
}
