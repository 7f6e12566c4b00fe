package io.atoll.server;

import java.io.IOException;
import java.io.Reader;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import java.util.Properties;
import java.util.Set;
import java.util.TreeSet;
import picocli.CommandLine;
import picocli.CommandLine.Model.ArgSpec;
import picocli.CommandLine.Model.OptionSpec;

/**
 * Option values from the environment and a configuration file, below the command line: a flag
 * wins over {@code ATOLL_<OPTION>} (e.g. {@code ATOLL_LEASE_MARGIN} for {@code --lease-margin}),
 * which wins over the file's {@code lease-margin=...}, which wins over the built-in default.
 *
 * <p>The file is a properties file named by {@code --config FILE} or {@code ATOLL_CONFIG}. A key
 * that names no option of the command stops the start with the key and the valid keys.
 */
final class ConfigSource implements CommandLine.IDefaultValueProvider {

  private final Map<String, String> env;
  private final Path file;
  private final Properties props = new Properties();

  ConfigSource(Map<String, String> env, Path file) {
    this.env = env;
    this.file = file;
    if (file != null) {
      try (Reader r = Files.newBufferedReader(file)) {
        props.load(r);
      } catch (IOException e) {
        throw new CommandLine.ParameterException(new CommandLine(new Object() {}),
            "config file " + file + ": cannot read it: " + e.getMessage());
      }
    }
  }

  /** Finds {@code --config FILE} (or {@code --config=FILE}) in the arguments, else ATOLL_CONFIG. */
  static Path configFile(String[] args, Map<String, String> env) {
    for (int i = 0; i < args.length; i++) {
      if (args[i].equals("--config") && i + 1 < args.length) {
        return Path.of(args[i + 1]);
      }
      if (args[i].startsWith("--config=")) {
        return Path.of(args[i].substring("--config=".length()));
      }
    }
    String e = env.get("ATOLL_CONFIG");
    return e == null || e.isBlank() ? null : Path.of(e);
  }

  static String key(OptionSpec o) {
    return o.longestName().replaceFirst("^--", "");
  }

  static String envName(OptionSpec o) {
    return "ATOLL_" + key(o).toUpperCase(java.util.Locale.ROOT).replace('-', '_');
  }

  @Override
  public String defaultValue(ArgSpec arg) {
    if (!(arg instanceof OptionSpec o) || key(o).equals("config") || o.usageHelp() || o.versionHelp()) {
      return null;
    }
    String e = env.get(envName(o));
    if (e != null) {
      return e;
    }
    return props.getProperty(key(o));
  }

  /**
   * Checks that every key of the file names an option of {@code command}.
   *
   * @throws CommandLine.ParameterException naming the unknown keys and the valid ones
   */
  void checkKeys(CommandLine command) {
    if (file == null) {
      return;
    }
    Set<String> valid = new TreeSet<>();
    for (OptionSpec o : command.getCommandSpec().options()) {
      if (!o.usageHelp() && !o.versionHelp() && !key(o).equals("config")) {
        valid.add(key(o));
      }
    }
    Set<String> unknown = new TreeSet<>();
    for (String k : props.stringPropertyNames()) {
      if (!valid.contains(k)) {
        unknown.add(k);
      }
    }
    if (!unknown.isEmpty()) {
      throw new CommandLine.ParameterException(command, "config file " + file + ": unknown key(s) " + unknown
          + " for 'atoll " + command.getCommandName() + "' (expected: any of " + valid + ")");
    }
  }
}
