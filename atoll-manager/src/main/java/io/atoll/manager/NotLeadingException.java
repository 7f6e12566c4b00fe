package io.atoll.manager;

/**
 * A manager refused to grant a lease because it cannot be sure it still leads: its store lease
 * may have lapsed, so a standby may lead by now. Expected during a store outage or a leader
 * change; the pod retries, or asks another manager. On the wire: UNAVAILABLE.
 */
final class NotLeadingException extends RuntimeException {

  private static final long serialVersionUID = 1L;

  NotLeadingException(String message) {
    super(message, null, false, false);
  }
}
