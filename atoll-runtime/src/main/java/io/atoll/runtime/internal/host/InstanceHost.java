package io.atoll.runtime.internal.host;

import io.atoll.core.FencingToken;
import io.atoll.core.PodId;
import io.atoll.runtime.Sharding;

/** What an {@link EntityInstance} needs from the shard host it lives in: its one door upward. */
interface InstanceHost {
  /** The clock. */
  long now();

  /** Messages entered ({@code delta > 0}) or left ({@code delta < 0}) the instance's mailbox. */
  void queued(int delta);

  /** Runs the instance's drain on a thread of its own. */
  void start(EntityInstance instance);

  /** Whether queued messages of {@code shard} may still be handled here at {@code now}. */
  boolean serving(ShardState shard, long now);

  /** The token of an activation of {@code shard} starting now. */
  FencingToken token(ShardState shard);

  /**
   * The state a hand-off carried here for {@code type/id} of {@code shard}, for the activation
   * starting under {@code token}; null if none. Taken once.
   */
  io.atoll.core.spi.StoredState takeCarried(ShardState shard, FencingToken token, String type, String id);

  /** The instance left its shard. */
  void removed(EntityInstance instance);

  /** An activation began. */
  void activated(EntityInstance instance);

  /** An activation ended. */
  void deactivated(EntityInstance instance);

  /** {@code activated} or {@code deactivated} (named by {@code hook}) threw: told, not rethrown. */
  void hookFailed(EntityInstance instance, String hook, Throwable t);

  /** The termination message threw. */
  void terminationFailed(EntityInstance instance, Throwable t);

  /** A drain took a message at {@code now} that had waited {@code waited} in its mailbox. */
  void began(long waited, long now);

  /** Whether a message of {@code type} a drain takes at {@code now} is too late to begin before its {@code deadline}. */
  boolean lateToBegin(TypeRuntime type, long now, long deadline);

  /**
   * A handler of {@code type} ran for {@code nanos}, returning at {@code now} (a sample: not every
   * handler is timed).
   */
  void handlerTime(TypeRuntime type, long nanos, long now);

  /** A message to an entity of {@code type} was refused as overloaded for {@code cause}. */
  void refused(TypeRuntime type, io.atoll.runtime.OverloadCause cause);

  /** This pod's identity. */
  PodId self();

  /** The pod's facade. */
  Sharding sharding();
}
