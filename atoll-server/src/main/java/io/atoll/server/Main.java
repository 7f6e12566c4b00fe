package io.atoll.server;

import java.nio.file.Path;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.Callable;
import picocli.CommandLine;
import picocli.CommandLine.Command;

/**
 * The {@code atoll} command: {@code manager}, {@code pod}, {@code status}, {@code demo}, {@code chaos} and {@code kv}.
 *
 * <p>Every option can also come from the environment ({@code ATOLL_<OPTION>}) or from a
 * properties file ({@code --config FILE} or {@code ATOLL_CONFIG}); a flag wins over the
 * environment, which wins over the file, which wins over the default.
 */
@Command(name = "atoll", mixinStandardHelpOptions = true, version = "atoll 0.1.0-SNAPSHOT",
    description = "Cluster sharding for the JVM.",
    subcommands = {ManagerCommand.class, PodCommand.class, StatusCommand.class, RebalanceCommand.class,
        DemoCommand.class, ChaosCommand.class, KvCommand.class, KvDemoCommand.class, CertsCommand.class,
        WarmUpCommand.class, KvCheckAofCommand.class})
public final class Main implements Callable<Integer> {

  /** Runs the command line and exits with its code. */
  public static void main(String[] args) {
    System.exit(run(args, System.getenv()));
  }

  /** Runs the command line with an environment; returns the exit code. */
  static int run(String[] args, Map<String, String> env) {
    CommandLine cl;
    ConfigSource source;
    try {
      source = new ConfigSource(env, ConfigSource.configFile(args, env));
    } catch (CommandLine.ParameterException e) {
      System.err.println("atoll: " + e.getMessage());
      return 2;
    }
    cl = new CommandLine(new Main())
        .registerConverter(Duration.class, new Durations())
        .setDefaultValueProvider(source)
        .setCaseInsensitiveEnumValuesAllowed(true);
    cl.setExecutionStrategy(parsed -> {
      CommandLine.ParseResult leaf = parsed;
      while (leaf.hasSubcommand()) {
        leaf = leaf.subcommand();
      }
      source.checkKeys(leaf.commandSpec().commandLine());
      return new CommandLine.RunLast().execute(parsed);
    });
    return cl.execute(args);
  }

  @Override
  public Integer call() {
    new CommandLine(this).usage(System.out);
    return 0;
  }

  /** The {@code --config} option every command takes. */
  static final class ConfigOption {
    @CommandLine.Option(names = "--config", paramLabel = "FILE",
        description = "A properties file of option values (keys are option names without --).")
    Path config;
  }
}
