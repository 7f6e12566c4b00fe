package io.atoll.kv.internal.command;

import java.util.Map;
import java.util.Set;

/**
 * A command as Redis' command table describes it: name, arity (negative: at least), flags, and
 * where its keys are ({@code firstKey}, {@code lastKey} (negative: from the end), {@code step}),
 * or its subcommands.
 */
record CommandSpec(String name, int arity, Set<String> flags, int firstKey, int lastKey, int step, Handler handler,
    Map<String, CommandSpec> subcommands) {

  boolean has(String flag) {
    return flags.contains(flag);
  }

  boolean hasKeys(int argc) {
    return firstKey > 0 && argc > firstKey;
  }

  /** The index of the last key for {@code argc} arguments. */
  int lastKeyIndex(int argc) {
    return lastKey >= 0 ? Math.min(lastKey, argc - 1) : argc + lastKey;
  }
}
