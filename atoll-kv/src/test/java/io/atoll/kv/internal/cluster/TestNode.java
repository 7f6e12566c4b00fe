package io.atoll.kv.internal.cluster;

import io.atoll.core.ClusterConfig;
import io.atoll.core.Pod;
import io.atoll.kv.KvObserver;
import io.atoll.kv.internal.command.Auth;
import io.atoll.kv.internal.command.Clients;
import io.atoll.kv.internal.command.CommandTable;
import io.atoll.kv.internal.command.Commands;
import io.atoll.kv.internal.command.Dispatcher;
import io.atoll.kv.internal.command.ServerInfo;
import io.atoll.kv.internal.command.Stats;
import io.atoll.kv.internal.resp.RespDecoder;
import io.atoll.kv.internal.resp.RespLimits;
import io.atoll.kv.internal.server.KvConnection;
import io.atoll.kv.internal.server.Transport;
import io.atoll.kv.internal.store.SlotStore;
import io.netty.bootstrap.ServerBootstrap;
import io.netty.channel.Channel;
import io.netty.channel.ChannelInitializer;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.socket.SocketChannel;
import java.io.IOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.concurrent.atomic.LongAdder;

/**
 * A managed KV node's command side served over a real RESP port, without a manager: its config is
 * set by the test ({@link #adopt}), its lease always live. The hand-off's parts are the real ones
 * (Dispatcher, ReturnCommands, Imports, Migrator), so a hand-off between two of these runs over
 * real sockets, through a relay when the test puts one between them.
 */
final class TestNode implements AutoCloseable {
  final Pod pod;
  final SlotStore store = new SlotStore();
  final ClusterState cluster;
  final Migrator migrator;
  /** Requests this node answered, and how many of them with an error. */
  final LongAdder commands = new LongAdder();
  final LongAdder errors = new LongAdder();
  private final NodeKey key;
  private final EventLoopGroup group = Transport.group(1, "test-kv");
  private final Channel channel;

  TestNode(NodeKey key, long incarnation) throws IOException, InterruptedException {
    this(key, incarnation, 0);
  }

  /** A node whose store refuses memory-growing writes past {@code maxMemory} bytes (0: no limit). */
  TestNode(NodeKey key, long incarnation, long maxMemory) throws IOException, InterruptedException {
    this.key = key;
    int port;
    try (ServerSocket s = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
      port = s.getLocalPort();
    }
    pod = Nodes.pod("127.0.0.1", port, incarnation, port + 10000);
    cluster = new ClusterState(ClusterState.fresh(pod), System::currentTimeMillis, v -> { });
    cluster.managed("manager", () -> true);
    migrator = new Migrator(store, cluster, System::currentTimeMillis);
    Stats stats = new Stats();
    Clients clients = new Clients();
    ServerInfo info = new ServerInfo(port, "127.0.0.1", 0, 1 << 20, 1 << 20, 1 << 20, 5000,
        System.currentTimeMillis());
    CommandTable table = Commands.table(store, cluster, Health.MANAGED, (h, p) -> { }, () -> pod, migrator,
        Runnable::run, stats, clients, info, Auth.NONE, key);
    KvObserver counting = new KvObserver() {
      @Override
      public void command(boolean error, long nanos) {
        commands.increment();
        if (error) {
          errors.increment();
        }
      }
    };
    Dispatcher dispatcher = new Dispatcher(table, store, cluster, stats, System::currentTimeMillis, maxMemory, counting);
    RespLimits limits = new RespLimits(1 << 20, 1 << 16, 64 << 10, 16L << 20);
    channel = new ServerBootstrap().group(group).channel(Transport.serverChannel())
        .childHandler(new ChannelInitializer<SocketChannel>() {
          @Override
          protected void initChannel(SocketChannel ch) {
            ch.pipeline().addLast(new RespDecoder(limits)).addLast(new KvConnection(dispatcher, clients,
                System::currentTimeMillis, 16L << 20, false, false));
          }
        })
        .bind("127.0.0.1", port).sync().channel();
  }

  int port() {
    return pod.id().address().port();
  }

  void adopt(ClusterConfig config) {
    cluster.adopt(config);
    Imports.settle(store, cluster.view());
  }

  /**
   * Has {@code owner} and {@code other} adopt one config in which both are active and every slot
   * is {@code owner}'s (epoch 2): the cluster is ok, and a slot moves by a hand-off alone.
   */
  static void everySlotOn(TestNode owner, TestNode other) {
    ClusterConfig.Builder b = ClusterConfig.empty(io.atoll.core.slots.KeySlots.SLOT_COUNT).toBuilder()
        .pod(new io.atoll.core.PodEntry(owner.pod, io.atoll.core.PodStatus.ACTIVE, 1))
        .pod(new io.atoll.core.PodEntry(other.pod, io.atoll.core.PodStatus.ACTIVE, 1));
    for (int s = 0; s < io.atoll.core.slots.KeySlots.SLOT_COUNT; s++) {
      b.claim(s, io.atoll.core.Claim.stable(owner.pod.id(), 2));
    }
    ClusterConfig config = b.build();
    owner.adopt(config);
    other.adopt(config);
  }

  /**
   * A hand-off connection to {@code target} through {@code port} (its own or a relay's) that
   * proved it is a node, as HandOffs opens one.
   */
  RespClient connect(int port, TestNode target, int timeoutMillis) throws IOException {
    RespClient c = new RespClient("127.0.0.1", port, timeoutMillis);
    c.send(List.of(b("CLUSTER"), b("ATOLL-NODE")));
    c.flush();
    String nonce = new String(c.readBulk(4 * NodeKey.NONCE_BYTES), StandardCharsets.US_ASCII);
    c.send(List.of(b("CLUSTER"), b("ATOLL-NODE"), b(key.proofFor(Nodes.nodeId(target.pod.id()), nonce))));
    c.flush();
    String err = c.read();
    if (err != null) {
      throw new IOException("node proof refused: " + err);
    }
    return c;
  }

  /** Hands {@code slots} off to {@code target} over {@code client}, as HandOffs runs it. */
  void handOff(RespClient client, TestNode target, int... slots) throws IOException {
    migrator.handOff(client, new Migrator.Target("127.0.0.1", target.port(), List.of(), 5000, false, true), slots,
        target.pod.id(), n -> { });
  }

  private static byte[] b(String s) {
    return s.getBytes(StandardCharsets.UTF_8);
  }

  @Override
  public void close() {
    channel.close().syncUninterruptibly();
    group.shutdownGracefully(0, 1, java.util.concurrent.TimeUnit.SECONDS).syncUninterruptibly();
  }
}
