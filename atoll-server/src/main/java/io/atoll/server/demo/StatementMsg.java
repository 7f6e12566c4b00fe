package io.atoll.server.demo;

import io.atoll.runtime.Reply;

/** The messages of the demo's second entity type, an account's statement. */
public sealed interface StatementMsg permits StatementMsg.Entry, StatementMsg.Total, StatementMsg.Stop {

  /**
   * Records a line of {@code amount} on the statement, once: {@code opId} is unique per line. Sent
   * with tell; its acknowledgement means the line is in the database.
   */
  record Entry(long opId, long amount) implements StatementMsg {}

  /** Answers the statement's total as the entity holds it. */
  record Total(Reply<Long> reply) implements StatementMsg {}

  /** The termination message: the activation ends. */
  record Stop() implements StatementMsg {}
}
