package io.atoll.server;

import io.atoll.transport.grpc.proto.RebalanceRequest;
import io.atoll.transport.grpc.proto.RebalanceResponse;
import java.time.Duration;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;

/** {@code atoll rebalance}: asks the manager for a rebalance round now. */
@Command(name = "rebalance", mixinStandardHelpOptions = true,
    description = "Runs a rebalance round now and prints what it moved.")
final class RebalanceCommand implements Callable<Integer> {

  @Mixin
  Main.ConfigOption config;

  @Mixin
  TlsOptions tls;

  @Option(names = "--manager", required = true, description = "The shard manager, host:port.")
  String manager;

  @Option(names = "--timeout", defaultValue = "30s", description = "Default: ${DEFAULT-VALUE}.")
  Duration timeout;

  @Override
  public Integer call() {
    return ManagerCall.run("rebalance", manager, timeout, tls, stub -> {
      RebalanceResponse r = stub.rebalance(RebalanceRequest.getDefaultInstance());
      return "moved " + r.getMoved() + " shards; config epoch " + r.getEpoch() + System.lineSeparator();
    });
  }
}
