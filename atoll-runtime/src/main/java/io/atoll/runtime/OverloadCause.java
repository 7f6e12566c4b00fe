package io.atoll.runtime;

/**
 * Why a pod refused a message as {@link DeliveryException.Reason#OVERLOADED}, unhandled: for the
 * metric {@code atoll.messages.refused{cause}} and {@link ShardingObserver#messageRefused}.
 */
public enum OverloadCause {
  /** The pod's mailboxes already held {@code maxQueued} messages. */
  POD_QUEUE_FULL,
  /** The entity's mailbox already held as many messages as one entity may keep waiting. */
  ENTITY_QUEUE_FULL,
  /**
   * The message was expected to wait longer than {@code maxQueueTime} before its handler: the
   * messages ahead of it in its entity's mailbox times the type's recent handler time, plus the
   * pod's standing queue delay.
   */
  QUEUE_TIME,
  /** The message was expected to miss its sender's deadline, so it was refused when it arrived. */
  DEADLINE,
  /**
   * When its turn came, too little of the sender's deadline was left for the type's recent handler
   * time (and the answer's way back): refused then, still unhandled, before the sender timed out.
   */
  DEADLINE_AT_HANDLER
}
