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

/** Calls to the shard manager from a command, with the command's errors and exit codes. */
final class ManagerCall {

  private ManagerCall() {}

  /** Calls over one channel: {@code stubs} gives a stub whose calls end after the given time. */
  @FunctionalInterface
  interface Session {
    /**
     * Makes the calls and prints what they found.
     *
     * @return the command's exit code
     * @throws StatusRuntimeException when a call fails: the command says the manager did not answer
     */
    int run(Function<Duration, ShardManagerServiceGrpc.ShardManagerServiceBlockingStub> stubs);
  }

  /**
   * Calls the manager at {@code manager} (host:port) and prints what {@code call} returns.
   *
   * @return 0 on success, 1 if the manager did not answer, 2 if the address is malformed
   */
  static int run(String command, String manager, Duration timeout, TlsOptions tls,
      Function<ShardManagerServiceGrpc.ShardManagerServiceBlockingStub, String> call) {
    return session(command, manager, tls, stubs -> {
      System.out.print(call.apply(stubs.apply(timeout)));
      return 0;
    });
  }

  /**
   * Opens a channel to the manager at {@code manager} (host:port) and runs {@code session} on it.
   *
   * @return what the session returns; 1 if a call failed (the manager did not answer), 2 if the
   *     address or the TLS options are malformed
   */
  static int session(String command, String manager, TlsOptions tls, Session session) {
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
      return session.run(t -> ShardManagerServiceGrpc.newBlockingStub(ch)
          .withDeadlineAfter(Math.max(1, t.toMillis()), TimeUnit.MILLISECONDS));
    } catch (StatusRuntimeException e) {
      System.err.println("atoll " + command + ": the shard manager at " + address + " did not answer: "
          + Wire.describe(e) + "; is it running?");
      return 1;
    } finally {
      ch.shutdownNow();
    }
  }
}
