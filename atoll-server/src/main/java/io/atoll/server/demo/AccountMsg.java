package io.atoll.server.demo;

import io.atoll.runtime.Reply;

/** The messages of the demo's bank-account entity. */
public sealed interface AccountMsg permits AccountMsg.Deposit, AccountMsg.Balance, AccountMsg.Stop {

  /**
   * Adds {@code amount} to the balance, once: {@code opId} is unique per deposit. Sent with tell;
   * its acknowledgement means the deposit is in the database.
   */
  record Deposit(long opId, long amount) implements AccountMsg {}

  /** Answers the balance as the entity holds it. */
  record Balance(Reply<Long> reply) implements AccountMsg {}

  /** The termination message: the activation ends. */
  record Stop() implements AccountMsg {}
}
