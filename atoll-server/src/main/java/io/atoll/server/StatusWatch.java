package io.atoll.server;

import io.atoll.core.ClusterConfig;
import io.atoll.core.PodAddress;
import io.atoll.transport.grpc.Wire;
import io.atoll.transport.grpc.security.Role;
import io.atoll.transport.grpc.security.WireSecurity;
import io.atoll.transport.grpc.proto.ConfigBytes;
import io.atoll.transport.grpc.proto.ShardManagerServiceGrpc;
import io.atoll.transport.grpc.proto.WatchRequest;
import io.grpc.ManagedChannel;
import io.grpc.StatusRuntimeException;
import java.io.PrintStream;
import java.time.LocalTime;
import java.time.format.DateTimeFormatter;
import java.util.Iterator;

/**
 * {@code atoll status --watch}: follows the manager's Watch stream (it sends the config at once and
 * every new one after) and redraws the status on each. On a terminal it redraws in place (cursor
 * home, clear); into a pipe or file it prints each status after the previous one. While the manager
 * cannot be reached it says so and tries again every second.
 */
final class StatusWatch {

  private static final String HOME_AND_CLEAR = "\033[H\033[2J";
  private static final DateTimeFormatter TIME = DateTimeFormatter.ofPattern("HH:mm:ss");

  private final PodAddress manager;
  private final WireSecurity security;
  private final PrintStream out;
  private final boolean inPlace;

  StatusWatch(PodAddress manager, PrintStream out, boolean inPlace) {
    this(manager, WireSecurity.PLAINTEXT, out, inPlace);
  }

  StatusWatch(PodAddress manager, WireSecurity security, PrintStream out, boolean inPlace) {
    this.security = security;
    this.manager = manager;
    this.out = out;
    this.inPlace = inPlace;
  }

  /** Redraws until interrupted, or after {@code updates} statuses if it is positive; returns 0. */
  int run(int updates) throws InterruptedException {
    ManagedChannel ch = Wire.channel(manager, security, Role.MANAGER);
    int shown = 0;
    try {
      while (true) {
        try {
          Iterator<ConfigBytes> it = ShardManagerServiceGrpc.newBlockingStub(ch).watch(WatchRequest.getDefaultInstance());
          while (it.hasNext()) {
            ClusterConfig c = Wire.config(it.next());
            draw(StatusCommand.render(c) + "updated " + LocalTime.now().format(TIME) + " from " + manager
                + (inPlace ? "; Ctrl-C to stop" : "") + "\n");
            if (updates > 0 && ++shown >= updates) {
              return 0;
            }
          }
        } catch (StatusRuntimeException e) {
          draw("the shard manager at " + manager + " did not answer: " + Wire.describe(e) + "; trying again every"
              + " second (" + LocalTime.now().format(TIME) + ")\n");
        }
        Thread.sleep(1000); // the retry pause after the stream ended or failed
      }
    } finally {
      ch.shutdownNow();
    }
  }

  private void draw(String text) {
    out.print(inPlace ? HOME_AND_CLEAR + text : text + "\n");
    out.flush();
  }
}
