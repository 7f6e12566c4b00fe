package io.atoll.kv.internal.server;

import io.atoll.kv.internal.command.Call;
import io.atoll.kv.internal.command.Clients;
import io.atoll.kv.internal.command.CommandLog;
import io.atoll.kv.internal.command.Dispatcher;
import io.atoll.kv.internal.command.Replication;
import io.atoll.kv.internal.command.Session;
import io.atoll.kv.internal.resp.Reply;
import io.atoll.kv.internal.resp.RespDecoder;
import io.netty.buffer.ByteBuf;
import io.netty.channel.ChannelFutureListener;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import java.util.ArrayDeque;
import java.util.function.LongSupplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One client connection: runs each decoded request through the {@link Dispatcher} in order,
 * gathers the replies of a pipelined batch in one buffer and flushes it once per read. A command
 * that finishes later (MIGRATE) holds back the requests behind it, so replies stay in order.
 *
 * <p>Bounded: reading pauses while the channel is not writable (the client does not read its
 * replies), and a client whose pending output passes {@code outputLimit} bytes is disconnected,
 * Redis' {@code client-output-buffer-limit}. Confined to the channel's event loop.
 */
public final class KvConnection extends ChannelInboundHandlerAdapter {
  private static final Logger LOG = LoggerFactory.getLogger(KvConnection.class);
  private static final int WRITE_CHUNK = 64 << 10;

  private final Dispatcher dispatcher;
  private final Clients clients;
  private final LongSupplier clock;
  private final long outputLimit;
  private final boolean tls;
  private final boolean passwordRequired;
  private final CommandLog log;
  private final Replication replication;
  /** Replies in {@link #out} (each a command's): replaced one for one if replicas do not ack. */
  private int buffered;
  /** QUIT's close waits for replies held for the replicas. */
  private boolean closeWhenReleased;
  private final Reply reply = new Reply();
  private final ArrayDeque<Object> held = new ArrayDeque<>();
  private Session session;
  private RespDecoder decoder;
  private ByteBuf out;
  private boolean waiting;
  private boolean closing;
  /** Its flush waits for the end of the event loop's turn ({@link TurnFlush}). */
  private boolean flushQueued;

  /** A handler for one plaintext connection to a node without a password. */
  public KvConnection(Dispatcher dispatcher, Clients clients, LongSupplier clock, long outputLimit) {
    this(dispatcher, clients, clock, outputLimit, false, false);
  }

  /**
   * A handler for one connection, over TLS or not ({@code tls}: the session says so), that must
   * authenticate first if {@code passwordRequired} (meanwhile its requests are capped).
   */
  public KvConnection(Dispatcher dispatcher, Clients clients, LongSupplier clock, long outputLimit, boolean tls,
      boolean passwordRequired) {
    this(dispatcher, clients, clock, outputLimit, tls, passwordRequired, CommandLog.NONE);
  }

  /**
   * As above, on a node with an append-only file {@code log}: replies that follow a write leave
   * only once the log has it (written, or synced under appendfsync always); if the log fails, they
   * never leave and the connection closes (the client cannot know the outcome, and is not told a
   * false one).
   */
  public KvConnection(Dispatcher dispatcher, Clients clients, LongSupplier clock, long outputLimit, boolean tls,
      boolean passwordRequired, CommandLog log) {
    this(dispatcher, clients, clock, outputLimit, tls, passwordRequired, log, Replication.NONE);
  }

  /**
   * As above, on a primary whose writes are acknowledged by replicas ({@code replication}): replies
   * that follow a write leave once enough replicas hold it; if they do not within the ack timeout,
   * each of those replies is {@code -NOREPLICAS} instead (the write ran here, unacknowledged).
   */
  public KvConnection(Dispatcher dispatcher, Clients clients, LongSupplier clock, long outputLimit, boolean tls,
      boolean passwordRequired, CommandLog log, Replication replication) {
    this.replication = replication;
    this.log = log;
    this.tls = tls;
    this.passwordRequired = passwordRequired;
    this.dispatcher = dispatcher;
    this.clients = clients;
    this.clock = clock;
    this.outputLimit = outputLimit;
  }

  @Override
  public void channelActive(ChannelHandlerContext ctx) {
    session = clients.open(String.valueOf(ctx.channel().remoteAddress()).replaceFirst("^/", ""),
        String.valueOf(ctx.channel().localAddress()).replaceFirst("^/", ""), clock.getAsLong(), tls,
        !passwordRequired);
    if (passwordRequired) {
      decoder = ctx.pipeline().get(RespDecoder.class);
      if (decoder != null) {
        decoder.unauthenticated(true);
      }
    }
    ctx.fireChannelActive();
  }

  @Override
  public void channelInactive(ChannelHandlerContext ctx) {
    if (session != null) {
      clients.close(session);
      dispatcher.unwatchAll(session);
    }
    if (out != null) {
      out.release();
      out = null;
    }
    ctx.fireChannelInactive();
  }

  @Override
  public void channelRead(ChannelHandlerContext ctx, Object msg) {
    if (closing) {
      return;
    }
    if (waiting) {
      held.add(msg);
      return;
    }
    handle(ctx, msg);
  }

  private void handle(ChannelHandlerContext ctx, Object msg) {
    if (msg instanceof RespDecoder.ProtocolError e) {
      buffer(ctx);
      reply.error("ERR " + e.message());
      closeAfterFlush(ctx);
      return;
    }
    byte[][] args = (byte[][]) msg;
    buffer(ctx);
    int before = out.writerIndex();
    Call call = dispatcher.execute(args, session, reply);
    if (out.writerIndex() > before) {
      buffered++;
    }
    if (decoder != null && session.authenticated()) {
      decoder.unauthenticated(false); // the requests decoded after this one get the full limits
      decoder = null;
    }
    if (call.takeover() != null) {
      // PSYNC: the replication stream takes the connection over; what was answered before it
      // (REPLCONF, AUTH) leaves first, and the stream's writer is the only one from now on.
      if (out != null && out.isReadable()) {
        ctx.write(out);
        out = null;
      }
      ctx.flush();
      call.takeover().accept(ctx.channel());
      return;
    }
    if (call.deferred() != null) {
      waiting = true;
      ctx.channel().config().setAutoRead(false); // what is already decoded waits in held

      call.deferred().whenComplete((write, failure) -> ctx.executor().execute(() -> {
        if (!ctx.channel().isActive()) {
          return;
        }
        buffer(ctx);
        int at = out.writerIndex();
        if (failure != null) {
          LOG.warn("command failed", failure);
          reply.error("ERR " + failure.getMessage());
        } else {
          write.accept(reply);
        }
        if (out.writerIndex() > at) {
          buffered++;
        }
        session.logPosition(log.position()); // what it changed (keys gone to another node) is logged first
        session.wrote();
        if (replication.acksWrites()) {
          session.replicaPosition(replication.offset()); // and held by the replicas (MIGRATE's DELs)
        }
        waiting = false;
        ctx.channel().config().setAutoRead(ctx.channel().isWritable());
        flush(ctx);
        resume(ctx);
      }));
      return;
    }
    if (session.closeAfterReply()) {
      closeAfterFlush(ctx);
      return;
    }
    if (out.readableBytes() >= WRITE_CHUNK) {
      if (!logged(ctx) || !replicated(ctx)) {
        return;
      }
      ctx.write(out);
      out = null;
      buffered = 0;
      checkOutputLimit(ctx);
    }
  }

  private void buffer(ChannelHandlerContext ctx) {
    if (out == null) {
      out = ctx.alloc().ioBuffer(256);
      reply.target(out);
    }
  }

  private void closeAfterFlush(ChannelHandlerContext ctx) {
    if (!logged(ctx)) {
      return;
    }
    if (!replicated(ctx)) {
      closeWhenReleased = true;
      return;
    }
    closing = true;
    held.clear();
    ByteBuf b = out;
    out = null;
    ctx.writeAndFlush(b).addListener(ChannelFutureListener.CLOSE);
  }

  private void checkOutputLimit(ChannelHandlerContext ctx) {
    var outbound = ctx.channel().unsafe().outboundBuffer();
    if (outputLimit > 0 && outbound != null && outbound.totalPendingWriteBytes() > outputLimit) {
      LOG.warn("client {} closed: {} bytes of output pending (expected: <= {}, client-output-buffer-limit)",
          session.id(), outbound.totalPendingWriteBytes(), outputLimit);
      closing = true;
      ctx.close();
    }
  }

  /**
   * Whether the replies buffered may leave: true unless a write among them is not in the log as
   * the fsync policy promises and cannot be; then the connection closes, the replies unsent.
   */
  private boolean logged(ChannelHandlerContext ctx) {
    long position = session.takeLogPosition();
    boolean wrote = session.takeWrote();
    if (position == 0 || log.awaitLogged(position) || !wrote) {
      return true; // reads go on while the log fails (what they saw may be lost), as Redis serves them
    }
    LOG.warn("client {} closed: the append-only file could not take its writes ({}); their replies are not sent",
        session.id(), log.writeError());
    closing = true;
    held.clear();
    if (out != null) {
      out.release();
      out = null;
    }
    ctx.close();
    return false;
  }

  private void flush(ChannelHandlerContext ctx) {
    if (!logged(ctx) || !replicated(ctx)) {
      return;
    }
    if (out != null && out.isReadable()) {
      ctx.write(out);
      out = null;
      buffered = 0;
    }
    ctx.flush();
    checkOutputLimit(ctx);
  }

  /** Handles what was read while a command or the replicas held the replies, until one holds them again. */
  private void resume(ChannelHandlerContext ctx) {
    while (!held.isEmpty() && !waiting && !closing) {
      handle(ctx, held.poll());
    }
    flush(ctx);
  }

  /**
   * Whether the replies buffered may leave now as far as the replicas go: true unless a write among
   * them is not yet held by enough replicas (--min-replicas-to-ack). Then reading stops, and once
   * they hold it the replies leave; if they do not within the ack timeout, each reply buffered is
   * {@code -NOREPLICAS} instead: the client is never told OK for a write no replica has.
   */
  private boolean replicated(ChannelHandlerContext ctx) {
    long position = session.takeReplicaPosition();
    if (position == 0 || replication.isReplicated(position)) {
      return true;
    }
    if (waiting) {
      // A command that answers later is under way (or a wait for the replicas already is): the
      // replies wait with it, and its completion looks at the replicas for all of them at once;
      // two waits could each release their replies and the order would be lost.
      session.replicaPosition(position);
      return false;
    }
    ByteBuf pending = out;
    int replies = buffered;
    out = null;
    buffered = 0;
    waiting = true;
    ctx.channel().config().setAutoRead(false);
    replication.whenReplicated(position).whenComplete((ok, failure) -> ctx.executor().execute(() -> {
      if (!ctx.channel().isActive()) {
        if (pending != null) {
          pending.release();
        }
        return;
      }
      if (Boolean.TRUE.equals(ok)) {
        if (pending != null) {
          ctx.write(pending);
        }
      } else {
        if (pending != null) {
          pending.release();
        }
        ByteBuf errors = ctx.alloc().ioBuffer(64 * Math.max(1, replies));
        for (int i = 0; i < replies; i++) {
          errors.writeCharSequence("-" + Replication.NOREPLICAS + "\r\n", java.nio.charset.StandardCharsets.US_ASCII);
        }
        ctx.write(errors);
      }
      ctx.flush();
      waiting = false;
      if (closeWhenReleased) {
        closing = true;
        held.clear();
        ctx.writeAndFlush(io.netty.buffer.Unpooled.EMPTY_BUFFER).addListener(ChannelFutureListener.CLOSE);
        return;
      }
      ctx.channel().config().setAutoRead(ctx.channel().isWritable());
      resume(ctx);
    }));
    return false;
  }

  @Override
  public void channelReadComplete(ChannelHandlerContext ctx) {
    if (!closing) {
      long position = session.logPositionNow();
      if (position != 0 && !log.isLogged(position)) {
        // With the other connections of this loop: one write and sync of the log for all of them.
        if (!flushQueued) {
          flushQueued = true;
          TurnFlush.of(ctx.executor(), log).add(ctx.executor(), () -> {
            flushQueued = false;
            if (!closing && ctx.channel().isActive()) {
              flush(ctx);
            }
          }, position);
        }
      } else {
        flush(ctx);
      }
    }
    ctx.fireChannelReadComplete();
  }

  @Override
  public void channelWritabilityChanged(ChannelHandlerContext ctx) {
    // While a deferred command runs, reading stays off: what arrives would pile up in held.
    ctx.channel().config().setAutoRead(ctx.channel().isWritable() && !waiting);
    ctx.fireChannelWritabilityChanged();
  }

  @Override
  public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
    LOG.debug("client connection failed", cause);
    ctx.close();
  }
}
