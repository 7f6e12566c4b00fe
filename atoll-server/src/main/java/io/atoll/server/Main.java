package io.atoll.server;

import java.util.concurrent.Callable;
import picocli.CommandLine;
import picocli.CommandLine.Command;

/** The {@code atoll} command. */
@Command(name = "atoll", mixinStandardHelpOptions = true, version = "atoll 0.1.0-SNAPSHOT",
    description = "Cluster sharding for the JVM.",
    subcommands = {Main.Demo.class})
public final class Main implements Callable<Integer> {

  /** Runs the command line and exits with its code. */
  public static void main(String[] args) {
    System.exit(new CommandLine(new Main()).execute(args));
  }

  @Override
  public Integer call() {
    new CommandLine(this).usage(System.out);
    return 0;
  }

  @Command(name = "demo", description = "A manager and three pods under load, with faults (not built yet).")
  static final class Demo implements Callable<Integer> {
    @Override
    public Integer call() {
      System.err.println("atoll demo: the demo arrives with the entity-sharding work (issue 3); nothing to run yet.");
      return 2;
    }
  }
}
