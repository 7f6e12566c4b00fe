package io.atoll.runtime.internal.codec;

import io.atoll.runtime.DeliveryException.Reason;
import io.atoll.transport.grpc.proto.Failure;

/** Failure reasons ({@link Reason}) to the wire's failure codes and back. */
public final class FailureCodes {

  private FailureCodes() {}

  public static Failure.Code toWire(Reason r) {
    return switch (r) {
      case UNKNOWN_ENTITY_TYPE -> Failure.Code.UNKNOWN_ENTITY_TYPE;
      case CODEC -> Failure.Code.UNDECODABLE_MESSAGE;
      case MESSAGE_TOO_LARGE -> Failure.Code.MESSAGE_TOO_LARGE;
      case ENTITY_FAILED -> Failure.Code.ENTITY_FAILED;
      case SHUT_DOWN -> Failure.Code.POD_STOPPING;
      case BAD_REQUEST -> Failure.Code.BAD_REQUEST;
      case TIMEOUT -> Failure.Code.TIMEOUT;
      case OVERLOADED -> Failure.Code.OVERLOADED;
      default -> Failure.Code.UNKNOWN;
    };
  }

  public static Reason fromWire(Failure.Code c) {
    return switch (c) {
      case UNKNOWN_ENTITY_TYPE -> Reason.UNKNOWN_ENTITY_TYPE;
      case UNDECODABLE_MESSAGE -> Reason.CODEC;
      case MESSAGE_TOO_LARGE -> Reason.MESSAGE_TOO_LARGE;
      case ENTITY_FAILED -> Reason.ENTITY_FAILED;
      case POD_STOPPING -> Reason.SHUT_DOWN;
      case BAD_REQUEST -> Reason.BAD_REQUEST;
      case TIMEOUT -> Reason.TIMEOUT;
      case OVERLOADED -> Reason.OVERLOADED;
      default -> Reason.OUTCOME_UNKNOWN;
    };
  }
}
