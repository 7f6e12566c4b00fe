package io.atoll.kv.internal.cluster;

import io.atoll.core.ClusterConfig;
import io.atoll.core.PodEntry;
import io.atoll.core.PodId;
import io.atoll.core.PodStatus;
import io.netty.bootstrap.Bootstrap;
import io.netty.bootstrap.ServerBootstrap;
import io.netty.buffer.ByteBuf;
import io.netty.channel.Channel;
import io.netty.channel.ChannelFuture;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInitializer;
import io.netty.channel.ChannelOption;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.ServerChannel;
import io.netty.channel.SimpleChannelInboundHandler;
import io.netty.channel.socket.SocketChannel;
import io.netty.handler.codec.LengthFieldBasedFrameDecoder;
import io.netty.handler.codec.LengthFieldPrepender;
import java.net.InetSocketAddress;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.LongSupplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The cluster bus: a TCP port of its own (Redis' port + 10000 by default) on which nodes gossip
 * their whole config. Every {@code tick} the bus pings each known node whose config it has not
 * yet sent, and every node at least once per {@code pingInterval}; a ping or meet is answered with
 * a pong carrying the receiver's config, and each side merges what it hears through
 * {@link ClusterState#merge} (Garnet's merge-if-newer). A ping from a node not in the config is
 * ignored unless it is a MEET, so FORGET sticks.
 *
 * <p>Failure detection as Redis names it: a node not heard from for {@code nodeTimeout} is
 * suspected (PFAIL); each message carries the sender's suspects; a node suspected by a majority of
 * the slot owners is FAIL until it is heard from again.
 *
 * <p>The group and channel classes come from the caller (epoll or NIO). All bus logic runs on one event loop of its own group (one thread), so link state has one
 * writer; the {@link Health} getters read it from other threads.
 */
public final class ClusterBus implements Health, AutoCloseable {
  private static final Logger LOG = LoggerFactory.getLogger(ClusterBus.class);
  private static final long TICK_MILLIS = 100;

  private final ClusterState state;
  private final EventLoopGroup group;
  private final LongSupplier clock;
  private final long nodeTimeout;
  private final long pingInterval;
  private final Map<PodId, Link> links = new ConcurrentHashMap<>();
  private final AtomicLong sent = new AtomicLong();
  private final AtomicLong received = new AtomicLong();
  private final Class<? extends ServerChannel> serverChannel;
  private final Class<? extends SocketChannel> channel;
  private Channel server;
  private ClusterConfig encodedFor;
  private byte[] encoded;

  /** Per peer: the outbound channel and what was heard. Written on the bus loop only. */
  private static final class Link {
    volatile Channel channel;
    boolean connecting;
    long nextConnect;
    volatile long pingSent;
    volatile long pongReceived;
    final long knownSince;
    long lastPing;
    ClusterConfig lastSent;
    List<PodId> reports = List.of();
    long reportedAt;

    Link(long now) {
      knownSince = now;
    }
  }

  /** A bus for {@code state}, on a group of one event loop that it owns from now on. */
  public ClusterBus(ClusterState state, EventLoopGroup group, Class<? extends ServerChannel> serverChannel,
      Class<? extends SocketChannel> channel, LongSupplier clock, long nodeTimeoutMillis) {
    this.serverChannel = serverChannel;
    this.channel = channel;
    this.state = state;
    this.group = group;
    this.clock = clock;
    this.nodeTimeout = nodeTimeoutMillis;
    this.pingInterval = Math.max(TICK_MILLIS, Math.min(1000, nodeTimeoutMillis / 4));
  }

  /** Binds the bus port and starts gossiping; returns the bound port. */
  public int start(String host, int port) throws InterruptedException {
    server = new ServerBootstrap().group(group).channel(serverChannel)
        .childOption(ChannelOption.TCP_NODELAY, true)
        .childHandler(initializer(null)).bind(host, port).sync().channel();
    group.next().scheduleAtFixedRate(this::tickSafely, TICK_MILLIS, TICK_MILLIS, TimeUnit.MILLISECONDS);
    return ((InetSocketAddress) server.localAddress()).getPort();
  }

  private ChannelInitializer<SocketChannel> initializer(Link link) {
    return new ChannelInitializer<>() {
      @Override
      protected void initChannel(SocketChannel ch) {
        ch.pipeline().addLast(new LengthFieldBasedFrameDecoder(BusMessage.MAX_FRAME, 0, 4, 0, 4))
            .addLast(new LengthFieldPrepender(4))
            .addLast(new SimpleChannelInboundHandler<ByteBuf>() {
              @Override
              protected void channelRead0(ChannelHandlerContext ctx, ByteBuf msg) {
                BusMessage m;
                try {
                  m = BusMessage.decode(msg);
                } catch (RuntimeException e) {
                  LOG.warn("cluster bus: malformed message from {}: {}; closing that link", ctx.channel().remoteAddress(),
                      e.getMessage());
                  ctx.close();
                  return;
                }
                onMessage(ctx.channel(), m);
              }

              @Override
              public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
                ctx.close();
              }
            });
      }
    };
  }

  /** CLUSTER MEET: introduces this node to the node whose bus listens at {@code host:busPort}. */
  public void meet(String host, int busPort) {
    group.next().execute(() -> new Bootstrap().group(group).channel(channel)
        .option(ChannelOption.CONNECT_TIMEOUT_MILLIS, (int) Math.max(1000, nodeTimeout))
        .handler(initializer(null)).connect(host, busPort).addListener((ChannelFuture f) -> {
          if (f.isSuccess()) {
            send(f.channel(), BusMessage.Kind.MEET);
          } else {
            LOG.warn("cluster meet {}:{} failed: {}", host, busPort, f.cause().getMessage());
          }
        }));
  }

  private void onMessage(Channel ch, BusMessage m) {
    received.incrementAndGet();
    ClusterView v = state.view();
    boolean known = v.config().isActive(m.sender());
    if (m.kind() == BusMessage.Kind.PING && !known) {
      return; // not a member (or forgotten): only MEET introduces a node
    }
    state.merge(m.config());
    long now = clock.getAsLong();
    Link link = links.computeIfAbsent(m.sender(), id -> new Link(now));
    link.pongReceived = now;
    if (m.kind() == BusMessage.Kind.PONG) {
      link.pingSent = 0;
    }
    link.reports = m.suspects();
    link.reportedAt = now;
    m.config().pod(m.sender()).ifPresent(e -> state.onPeerEpoch(e.id(), e.epoch()));
    if (m.kind() != BusMessage.Kind.PONG) {
      send(ch, BusMessage.Kind.PONG);
    }
  }

  private void send(Channel ch, BusMessage.Kind kind) {
    ClusterView v = state.view();
    if (encodedFor != v.config()) {
      encoded = v.config().encode();
      encodedFor = v.config();
    }
    List<PodId> suspects = new ArrayList<>();
    links.forEach((id, l) -> {
      if (suspected(id)) {
        suspects.add(id);
      }
    });
    ByteBuf buf = ch.alloc().buffer(encoded.length + 64);
    new BusMessage(kind, v.me(), v.config(), suspects).encode(buf, encoded);
    ch.writeAndFlush(buf);
    sent.incrementAndGet();
  }

  private void tickSafely() {
    try {
      tick();
    } catch (RuntimeException e) {
      LOG.warn("cluster bus tick failed", e);
    }
  }

  private void tick() {
    long now = clock.getAsLong();
    ClusterView v = state.view();
    Set<PodId> members = new HashSet<>();
    for (PodEntry e : v.config().pods()) {
      if (e.status() != PodStatus.ACTIVE || e.id().equals(v.me())) {
        continue;
      }
      members.add(e.id());
      Link link = links.computeIfAbsent(e.id(), id -> new Link(now));
      Channel ch = link.channel;
      if (ch == null || !ch.isActive()) {
        link.channel = null;
        if (!link.connecting && now >= link.nextConnect) {
          connect(link, e);
        }
        if (link.pingSent == 0) {
          link.pingSent = now; // a link that is down counts as an unanswered ping
        }
      } else if (link.lastSent != v.config() || now - link.lastPing >= pingInterval) {
        send(ch, BusMessage.Kind.PING);
        link.lastSent = v.config();
        link.lastPing = now;
        if (link.pingSent == 0) {
          link.pingSent = now;
        }
      }
    }
    links.entrySet().removeIf(en -> {
      if (!members.contains(en.getKey())) {
        Channel ch = en.getValue().channel;
        if (ch != null) {
          ch.close();
        }
        return true;
      }
      return false;
    });
    state.failed(failedNodes(v, now));
  }

  private void connect(Link link, PodEntry e) {
    link.connecting = true;
    new Bootstrap().group(group).channel(channel)
        .option(ChannelOption.CONNECT_TIMEOUT_MILLIS, (int) Math.max(500, Math.min(nodeTimeout, 5000)))
        .option(ChannelOption.TCP_NODELAY, true)
        .handler(initializer(link))
        .connect(e.id().address().host(), Nodes.busPort(e.pod())).addListener((ChannelFuture f) -> {
          link.connecting = false;
          if (f.isSuccess()) {
            link.channel = f.channel();
            link.lastSent = null;
          } else {
            link.nextConnect = clock.getAsLong() + Math.min(1000, nodeTimeout / 2);
          }
        });
  }

  private Set<PodId> failedNodes(ClusterView v, long now) {
    Map<PodId, Integer> owned = v.config().ownedCounts();
    List<PodId> voters = new ArrayList<>();
    owned.forEach((id, n) -> {
      if (n > 0 && v.config().isActive(id)) {
        voters.add(id);
      }
    });
    int quorum = voters.size() / 2 + 1;
    Set<PodId> failed = new HashSet<>();
    for (PodId id : links.keySet()) {
      if (!suspected(id)) {
        continue;
      }
      if (v.failed().contains(id)) {
        failed.add(id); // FAIL sticks until the node is heard from again
        continue;
      }
      int votes = voters.contains(v.me()) ? 1 : 0;
      for (PodId voter : voters) {
        if (voter.equals(id) || voter.equals(v.me())) {
          continue;
        }
        Link l = links.get(voter);
        if (l != null && now - l.reportedAt <= 2 * nodeTimeout && l.reports.contains(id)) {
          votes++;
        }
      }
      if (votes >= quorum) {
        failed.add(id);
        LOG.info("cluster: node {} marked FAIL ({} of {} slot owners agree)", v.nodeId(id), votes, voters.size());
      }
    }
    return failed;
  }

  @Override
  public boolean linkUp(PodId node) {
    Link l = links.get(node);
    Channel ch = l == null ? null : l.channel;
    return ch != null && ch.isActive();
  }

  @Override
  public long pingSent(PodId node) {
    Link l = links.get(node);
    return l == null ? 0 : l.pingSent;
  }

  @Override
  public long pongReceived(PodId node) {
    Link l = links.get(node);
    return l == null ? 0 : l.pongReceived;
  }

  @Override
  public boolean suspected(PodId node) {
    Link l = links.get(node);
    if (l == null) {
      return false;
    }
    long heard = Math.max(l.pongReceived, l.knownSince);
    return clock.getAsLong() - heard > nodeTimeout;
  }

  @Override
  public int failureReports(PodId node) {
    long now = clock.getAsLong();
    int n = 0;
    for (Link l : links.values()) {
      if (now - l.reportedAt <= 2 * nodeTimeout && l.reports.contains(node)) {
        n++;
      }
    }
    return n;
  }

  @Override
  public long messagesSent() {
    return sent.get();
  }

  @Override
  public long messagesReceived() {
    return received.get();
  }

  @Override
  public void close() {
    if (server != null) {
      server.close().syncUninterruptibly();
    }
    for (Link l : links.values()) {
      Channel ch = l.channel;
      if (ch != null) {
        ch.close();
      }
    }
  }
}
