package io.atoll.server;

import io.atoll.core.PodAddress;
import io.atoll.transport.grpc.Wire;
import io.atoll.transport.grpc.proto.ShardManagerServiceGrpc;
import io.atoll.transport.grpc.security.Role;
import io.atoll.transport.grpc.security.WireSecurity;
import io.grpc.ManagedChannel;
import io.grpc.StatusRuntimeException;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import java.util.function.Function;

/** One call to the shard manager from a command, with the command's errors and exit codes. */
final class ManagerCall {

  private ManagerCall() {}

  /**
   * Calls the manager at {@code manager} (host:port) and prints what {@code call} returns.
   *
   * @return 0 on success, 1 if the manager did not answer, 2 if the address is malformed
   */
  static int run(String command, String manager, Duration timeout, TlsOptions tls,
      Function<ShardManagerServiceGrpc.ShardManagerServiceBlockingStub, String> call) {
    WireSecurity security;
    try {
      security = tls.security(Role.ADMIN);
    } catch (IllegalArgumentException e) {
      System.err.println("atoll " + command + ": " + e.getMessage());
      return 2;
    }
    PodAddress address;
    try {
      address = PodAddress.parse(manager);
    } catch (IllegalArgumentException e) {
      System.err.println("atoll " + command + ": --manager " + e.getMessage());
      return 2;
    }
    ManagedChannel ch = Wire.channel(address, security, Role.MANAGER);
    try {
      System.out.print(call.apply(ShardManagerServiceGrpc.newBlockingStub(ch)
          .withDeadlineAfter(timeout.toMillis(), TimeUnit.MILLISECONDS)));
      return 0;
    } catch (StatusRuntimeException e) {
      System.err.println("atoll " + command + ": the shard manager at " + address + " did not answer: "
          + Wire.describe(e) + "; is it running?");
      return 1;
    } finally {
      ch.shutdownNow();
    }
  }
}
