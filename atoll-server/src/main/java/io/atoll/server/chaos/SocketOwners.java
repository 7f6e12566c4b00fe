package io.atoll.server.chaos;

import java.io.IOException;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.IntPredicate;

/**
 * Which process holds the client end of a loopback connection, from Linux's {@code /proc}: the
 * socket whose local port is the client's and whose remote port is the server's
 * ({@code /proc/net/tcp} and {@code tcp6}), then the process that has that socket open
 * ({@code /proc/PID/fd}). How a relay in front of a pod tells the connections of one other pod
 * from everyone else's, all of them from 127.0.0.1. Linux only; elsewhere it finds nothing.
 */
final class SocketOwners {

  private static final List<Path> TABLES = List.of(Path.of("/proc/net/tcp"), Path.of("/proc/net/tcp6"));

  private SocketOwners() {}

  /**
   * The connections to {@code serverPort} held by process {@code pid}: a predicate over client
   * ports that looks each port up once (a fault's connections are few and long-lived).
   */
  static IntPredicate heldBy(long pid, int serverPort) {
    Map<Integer, Boolean> seen = new ConcurrentHashMap<>();
    return clientPort -> seen.computeIfAbsent(clientPort, p -> owns(pid, p, serverPort));
  }

  /** Whether process {@code pid} holds the socket from {@code clientPort} to {@code serverPort}. */
  static boolean owns(long pid, int clientPort, int serverPort) {
    String inode = inode(clientPort, serverPort);
    if (inode == null) {
      return false;
    }
    String link = "socket:[" + inode + "]";
    try (DirectoryStream<Path> fds = Files.newDirectoryStream(Path.of("/proc", Long.toString(pid), "fd"))) {
      for (Path fd : fds) {
        try {
          if (Files.readSymbolicLink(fd).toString().equals(link)) {
            return true;
          }
        } catch (IOException e) {
          // closed since the listing
        }
      }
    } catch (IOException e) {
      return false; // gone, or not Linux
    }
    return false;
  }

  /** The inode of the socket with local port {@code localPort} and remote port {@code remotePort}. */
  private static String inode(int localPort, int remotePort) {
    String local = String.format(":%04X", localPort);
    String remote = String.format(":%04X", remotePort);
    for (Path table : TABLES) {
      List<String> lines;
      try {
        lines = Files.readAllLines(table);
      } catch (IOException e) {
        continue;
      }
      for (String line : lines) {
        // sl local_address rem_address st tx_queue:rx_queue tr:tm->when retrnsmt uid timeout inode
        String[] f = line.trim().split("\\s+");
        if (f.length > 9 && f[1].endsWith(local) && f[2].endsWith(remote)) {
          return f[9];
        }
      }
    }
    return null;
  }
}
