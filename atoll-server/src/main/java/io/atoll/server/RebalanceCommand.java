package io.atoll.server;

import io.atoll.core.PodAddress;
import io.atoll.transport.grpc.Wire;
import io.atoll.transport.grpc.proto.RebalanceRequest;
import io.atoll.transport.grpc.proto.RebalanceResponse;
import io.atoll.transport.grpc.proto.ShardManagerServiceGrpc;
import io.grpc.ManagedChannel;
import io.grpc.StatusRuntimeException;
import java.time.Duration;
import java.util.concurrent.Callable;
import java.util.concurrent.TimeUnit;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;

/** {@code atoll rebalance}: asks the manager for a rebalance round now. */
@Command(name = "rebalance", mixinStandardHelpOptions = true,
    description = "Runs a rebalance round now and prints what it moved.")
final class RebalanceCommand implements Callable<Integer> {

  @Mixin
  Main.ConfigOption config;

  @Option(names = "--manager", required = true, description = "The shard manager, host:port.")
  String manager;

  @Option(names = "--timeout", defaultValue = "30s", description = "Default: ${DEFAULT-VALUE}.")
  Duration timeout;

  @Override
  public Integer call() {
    PodAddress address;
    try {
      address = PodAddress.parse(manager);
    } catch (IllegalArgumentException e) {
      System.err.println("atoll rebalance: --manager " + e.getMessage());
      return 2;
    }
    ManagedChannel ch = Wire.channel(address);
    try {
      RebalanceResponse r = ShardManagerServiceGrpc.newBlockingStub(ch)
          .withDeadlineAfter(timeout.toMillis(), TimeUnit.MILLISECONDS)
          .rebalance(RebalanceRequest.getDefaultInstance());
      System.out.println("moved " + r.getMoved() + " shards; config epoch " + r.getEpoch());
      return 0;
    } catch (StatusRuntimeException e) {
      System.err.println("atoll rebalance: the shard manager at " + address + " did not answer: " + e.getStatus()
          + " (is it running?)");
      return 1;
    } finally {
      ch.shutdownNow();
    }
  }
}
