/**
 * The manager's decisions as pure functions: records in, records out, no threads, no I/O, no
 * clock. A rebalance round is {@link io.atoll.manager.round.Rounds#plan planned} from the config
 * and the strategy, {@link io.atoll.manager.round.Rounds#survivors thinned} by the pods that did
 * not answer their ping, {@link io.atoll.manager.round.Rounds#settle settled} by what the old
 * owners released, and {@link io.atoll.manager.round.Rounds#apply applied} to the config installed
 * by then. Membership changes and the start of a term ({@link io.atoll.manager.round.Rounds#reassert})
 * are here too. The loop in {@code io.atoll.manager} runs them; tests call them directly.
 *
 * <p>Internal to the shard manager: not API, may change without notice. Imports atoll-core only.
 */
package io.atoll.manager.round;
