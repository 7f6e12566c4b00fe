package io.atoll.kv.internal.command;

import java.util.Collection;
import java.util.HashMap;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;

/** The commands by lower-case name. Built once, then read-only and thread-safe. */
public final class CommandTable {
  private final Map<String, CommandSpec> commands;

  private CommandTable(Map<String, CommandSpec> commands) {
    this.commands = Map.copyOf(commands);
  }

  CommandSpec get(String lowerName) {
    return commands.get(lowerName);
  }

  Collection<CommandSpec> all() {
    return new TreeMap<>(commands).values();
  }

  int size() {
    return commands.size();
  }

  /** Collects commands; {@link #build()} freezes them. */
  public static final class Builder {
    private final Map<String, CommandSpec> commands = new HashMap<>();
    private CommandTable built;

    /** Adds a command with keys at {@code first..last} by {@code step} (0, 0, 0: no keys). */
    Builder add(String name, int arity, String flags, int first, int last, int step, Handler h) {
      commands.put(name, new CommandSpec(name, arity, flags(flags), first, last, step, h, null));
      return this;
    }

    /** Adds a container command ({@code CLUSTER}, {@code CLIENT}, ...) and its subcommands. */
    Builder container(String name, Map<String, CommandSpec> subs) {
      return container(name, null, subs);
    }

    /** A container that runs {@code alone} when called without a subcommand ({@code COMMAND}). */
    Builder container(String name, Handler alone, Map<String, CommandSpec> subs) {
      commands.put(name, new CommandSpec(name, alone == null ? -2 : -1, Set.of(), 0, 0, 0, alone, Map.copyOf(subs)));
      return this;
    }

    static CommandSpec sub(String container, String name, int arity, String flags, Handler h) {
      return new CommandSpec(container + "|" + name, arity, flags(flags), 0, 0, 0, h, null);
    }

    private static Set<String> flags(String flags) {
      return flags.isBlank() ? Set.of() : Set.of(flags.trim().split("\\s+"));
    }

    /** The table (built once; later calls return the same table). */
    public CommandTable build() {
      if (built == null) {
        built = new CommandTable(commands);
      }
      return built;
    }
  }
}
