package io.atoll.transport.grpc;

import com.google.protobuf.ByteString;
import io.atoll.core.ClusterConfig;
import io.atoll.core.Pod;
import io.atoll.core.PodAddress;
import io.atoll.core.PodId;
import io.atoll.core.PodVersion;
import io.atoll.transport.grpc.proto.ConfigBytes;
import io.atoll.transport.grpc.proto.EntityTypeInfo;
import io.atoll.transport.grpc.proto.PodInfo;
import io.atoll.transport.grpc.proto.PodRef;
import io.atoll.transport.grpc.security.Role;
import io.atoll.transport.grpc.security.WireSecurity;
import io.grpc.BindableService;
import io.grpc.ConnectivityState;
import io.grpc.ManagedChannel;
import io.grpc.Server;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.grpc.netty.shaded.io.grpc.netty.NettyChannelBuilder;
import io.grpc.netty.shaded.io.grpc.netty.NettyServerBuilder;
import io.grpc.netty.shaded.io.netty.channel.Channel;
import io.grpc.netty.shaded.io.netty.channel.EventLoopGroup;
import io.grpc.netty.shaded.io.netty.channel.ServerChannel;
import io.grpc.netty.shaded.io.netty.channel.epoll.Epoll;
import io.grpc.netty.shaded.io.netty.channel.epoll.EpollEventLoopGroup;
import io.grpc.netty.shaded.io.netty.channel.epoll.EpollServerSocketChannel;
import io.grpc.netty.shaded.io.netty.channel.epoll.EpollSocketChannel;
import io.grpc.netty.shaded.io.netty.channel.nio.NioEventLoopGroup;
import io.grpc.netty.shaded.io.netty.channel.socket.nio.NioServerSocketChannel;
import io.grpc.netty.shaded.io.netty.channel.socket.nio.NioSocketChannel;
import io.grpc.netty.shaded.io.netty.util.concurrent.DefaultThreadFactory;
import io.grpc.netty.shaded.io.netty.util.concurrent.EventExecutor;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.ConnectException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.net.UnknownHostException;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Executor;
import java.util.concurrent.TimeUnit;

/**
 * Conversions between the model of atoll-core and the wire messages of {@code atoll.proto}, and
 * the one way Atoll opens gRPC channels and servers. Stateless and thread-safe.
 *
 * <p>Every conversion from the wire validates what it reads and throws
 * {@link StatusRuntimeException} with {@code INVALID_ARGUMENT} and a description naming the field
 * and the expected form, so a service method can hand it straight back to its caller.
 */
public final class Wire {

  /** The largest gRPC message Atoll accepts: a batch of envelopes or a config. */
  public static final int MAX_GRPC_MESSAGE_BYTES = 32 << 20;

  /**
   * Both ends ping an idle-looking connection this often, and drop it when a ping is not answered
   * within {@link #KEEPALIVE_TIMEOUT_SECONDS}: a stalled connection (packets dropped, a frozen
   * peer) is found within about 15 s on either side, so an old stream cannot linger and deliver
   * late what its sender already counts as failed.
   */
  public static final int KEEPALIVE_SECONDS = 10;
  /** How long a keepalive ping may go unanswered before the connection is dropped. */
  public static final int KEEPALIVE_TIMEOUT_SECONDS = 5;
  /**
   * How long a server keeps a connection with no open call: it then closes it gracefully (the
   * client reconnects on its next call). It also bounds how long a connection whose keepalive failed
   * stays open: keepalive, its timeout, then this.
   */
  public static final int MAX_IDLE_SECONDS = 20;

  private Wire() {}

  /**
   * The transport threads of this JVM, shared by every Atoll channel and server: one event loop
   * per core, daemon threads. Atoll owns them (rather than gRPC's hidden default) so that work
   * can be handed to the event loop a stream lives on: writes made there need no cross-thread
   * buffer hand-off, and everything queued while the loop was busy leaves in one flush.
   */
  private static final class Io {
    static final boolean EPOLL = Epoll.isAvailable();
    static final EventLoopGroup GROUP = EPOLL
        ? new EpollEventLoopGroup(Math.max(2, Runtime.getRuntime().availableProcessors()),
            new DefaultThreadFactory("atoll-io", true))
        : new NioEventLoopGroup(Math.max(2, Runtime.getRuntime().availableProcessors()),
            new DefaultThreadFactory("atoll-io", true));
    static final Class<? extends Channel> CLIENT = EPOLL ? EpollSocketChannel.class : NioSocketChannel.class;
    static final Class<? extends ServerChannel> SERVER = EPOLL ? EpollServerSocketChannel.class
        : NioServerSocketChannel.class;
  }

  /** The transport event loop the calling thread runs, or null if it runs none. */
  public static Executor currentEventLoop() {
    for (EventExecutor e : Io.GROUP) {
      if (e.inEventLoop()) {
        return e;
      }
    }
    return null;
  }

  /** The wire form of a pod identity. */
  public static PodRef ref(PodId id) {
    return PodRef.newBuilder()
        .setHost(id.address().host())
        .setPort(id.address().port())
        .setIncarnation(id.incarnation())
        .build();
  }

  /** A pod identity from the wire. @throws StatusRuntimeException INVALID_ARGUMENT if malformed */
  public static PodId podId(PodRef ref) {
    try {
      return new PodId(new PodAddress(ref.getHost(), ref.getPort()), ref.getIncarnation());
    } catch (IllegalArgumentException e) {
      throw invalid("pod: " + e.getMessage());
    }
  }

  /** The wire form of a pod with its version. */
  public static PodInfo info(Pod pod) {
    PodInfo.Builder b = PodInfo.newBuilder().setPod(ref(pod.id())).setVersion(pod.version().value());
    if (!pod.hasDefaultRoles()) {
      b.addAllRoles(pod.roles());
    }
    if (pod.tlsPort() != 0) {
      b.setTlsPort(pod.tlsPort());
    }
    return b.build();
  }

  /** The most entity types a pod may declare when it registers. */
  public static final int MAX_ENTITY_TYPES = 1024;

  /**
   * The most entity types a GetAssignments answer carries (the first by name; the rest are only
   * counted): with every field at its most (a 255-character name, a 64-byte role, a 255-character
   * hasher name; or an older pod's 255-character name of 3-byte UTF-8 characters without a hasher),
   * under 4 MiB beside the config (about 2.4 MiB for the first; {@code ManagerServiceTest}).
   */
  public static final int MAX_LISTED_TYPES = 4096;

  /**
   * How a manager's refusal of a pod whose declaration of a type disagrees with the live pods'
   * begins (FAILED_PRECONDITION): a pod fails its start at once on it rather than retrying.
   */
  public static final String TYPES_REFUSED = "entity type declaration refused: ";

  /**
   * How a manager's answer "not yet" to a registering pod begins (ABORTED): pods it inherited at
   * its start have not declared their types to it yet. The manager is up and leads: a pod retries
   * it with a back-off, and does not count it as the manager being down (UNAVAILABLE would move it
   * to a standby).
   */
  public static final String TYPES_PENDING = "entity type declarations pending: ";
  /**
   * How a manager's FAILED_PRECONDITION answer to Register begins when the incarnation registering
   * was declared gone or is being declared so: it can never be registered again, and a process
   * that restarted with it (an Atoll KV node on its data directory) must join as a new one.
   */
  public static final String INCARNATION_GONE = "incarnation gone: ";

  /**
   * The wire form of a pod with its version and the entity types it hosts ({@code types}: name
   * to declaration).
   */
  public static PodInfo info(Pod pod, java.util.Map<String, io.atoll.core.TypeDeclaration> types) {
    PodInfo.Builder b = info(pod).toBuilder();
    types.forEach((name, d) -> b.addEntityTypes(typeInfo(name, d)));
    return b.build();
  }

  /** The wire form of one declared type. */
  public static EntityTypeInfo typeInfo(String name, io.atoll.core.TypeDeclaration d) {
    return EntityTypeInfo.newBuilder().setName(name).setRole(d.role()).setHasher(d.hasher())
        .setHasherFingerprint(d.fingerprint()).build();
  }

  /**
   * The entity types a registering pod declares, name to declaration in name order; empty for a
   * pod that declares none (one that predates them, or an Atoll KV node). A type without a hasher
   * comes from a pod that predates fingerprints ({@link io.atoll.core.TypeDeclaration#roleOnly}).
   *
   * @throws StatusRuntimeException INVALID_ARGUMENT naming what is wrong: too many, a name, role or
   *     hasher name out of form, a name twice, or a role the pod does not host
   */
  public static java.util.SortedMap<String, io.atoll.core.TypeDeclaration> entityTypes(PodInfo info, Pod pod) {
    if (info.getEntityTypesCount() > MAX_ENTITY_TYPES) {
      throw invalid("pod entity types: " + info.getEntityTypesCount() + " (expected: 0.." + MAX_ENTITY_TYPES + ")");
    }
    java.util.SortedMap<String, io.atoll.core.TypeDeclaration> types = new java.util.TreeMap<>();
    for (EntityTypeInfo t : info.getEntityTypesList()) {
      String name = t.getName();
      if (t.getHasher().isEmpty() && t.getHasherFingerprint() == 0) {
        // A pod of a version that declared no hasher accepted any name of 1..255 characters: it
        // still joins (the name printed escaped), or upgrading the manager would lock it out.
        if (name.isEmpty() || name.length() > io.atoll.core.EntityAddress.MAX_TYPE_LENGTH) {
          throw invalid("pod entity type: length " + name.length() + " (expected: 1.."
              + io.atoll.core.EntityAddress.MAX_TYPE_LENGTH + ")");
        }
      } else {
        try {
          io.atoll.core.EntityAddress.checkTypeName(name);
        } catch (IllegalArgumentException e) {
          throw invalid("pod " + e.getMessage());
        }
      }
      String shown = io.atoll.core.EntityAddress.printableTypeName(name);
      io.atoll.core.TypeDeclaration d;
      try {
        d = new io.atoll.core.TypeDeclaration(t.getRole(), t.getHasherFingerprint(), t.getHasher());
      } catch (IllegalArgumentException e) {
        throw invalid("pod entity type '" + shown + "': " + e.getMessage());
      }
      if (!pod.hosts(t.getRole())) {
        throw invalid("pod entity type '" + shown + "': role '" + t.getRole() + "' (expected: one of the pod's"
            + " roles " + pod.roles() + ")");
      }
      if (types.put(name, d) != null) {
        throw invalid("pod entity type '" + shown + "': declared twice (expected: once)");
      }
    }
    return types;
  }

  /** A pod from the wire. @throws StatusRuntimeException INVALID_ARGUMENT if malformed */
  public static Pod pod(PodInfo info) {
    if (!info.hasPod()) {
      throw invalid("pod: missing (expected: host, port and incarnation)");
    }
    try {
      PodId id = podId(info.getPod());
      PodVersion version;
      try {
        version = new PodVersion(info.getVersion());
      } catch (IllegalArgumentException e) {
        throw invalid("pod version: " + e.getMessage());
      }
      if (info.getRolesCount() > Pod.MAX_ROLES) {
        throw invalid("pod roles: " + info.getRolesCount() + " (expected: 0.." + Pod.MAX_ROLES + ")");
      }
      if (info.getTlsPort() < 0 || info.getTlsPort() > 65535) {
        throw invalid("pod TLS port: " + info.getTlsPort() + " (expected: 1..65535, or 0 for none)");
      }
      return new Pod(id, version, info.getRolesCount() == 0 ? Pod.DEFAULT_ROLES : info.getRolesList(),
          info.getTlsPort());
    } catch (IllegalArgumentException e) {
      throw invalid("pod roles: " + e.getMessage());
    }
  }

  /** The wire form of a config: its own compact encoding. */
  public static ConfigBytes bytes(ClusterConfig config) {
    return ConfigBytes.newBuilder().setEncoded(ByteString.copyFrom(config.encode())).build();
  }

  /** A config from the wire. @throws StatusRuntimeException INVALID_ARGUMENT if malformed */
  public static ClusterConfig config(ConfigBytes bytes) {
    try {
      return ClusterConfig.decode(bytes.getEncoded().toByteArray());
    } catch (IllegalArgumentException e) {
      throw invalid("config: " + e.getMessage());
    }
  }

  /** A failed call in one line: code, description and the root cause's message, no stack. */
  public static String describe(StatusRuntimeException e) {
    Status s = e.getStatus();
    StringBuilder b = new StringBuilder(s.getCode().toString());
    if (s.getDescription() != null) {
      b.append(": ").append(s.getDescription());
    }
    Throwable root = s.getCause();
    while (root != null && root.getCause() != null && root.getCause() != root) {
      root = root.getCause();
    }
    if (root != null && root.getMessage() != null) {
      b.append(" (").append(root.getMessage()).append(')');
    }
    return b.toString();
  }

  /** An INVALID_ARGUMENT status exception with a description. */
  public static StatusRuntimeException invalid(String description) {
    return Status.INVALID_ARGUMENT.withDescription(description).asRuntimeException();
  }

  /**
   * A plaintext channel to {@code address}. Calls run their callbacks on the transport thread
   * ({@code directExecutor}); callers never block in them. Failed connects are retried with
   * gRPC's own back-off (from about 1 s, growing to 2 min); {@link #reconnecting} cuts it short.
   */
  public static ManagedChannel channel(PodAddress address) {
    return channel(address, WireSecurity.PLAINTEXT, Role.POD);
  }

  /**
   * As {@link #channel(PodAddress)}, secured by {@code security}: with TLS, the server must
   * present a certificate of the cluster's CA holding {@code server}'s role.
   */
  public static ManagedChannel channel(PodAddress address, WireSecurity security, Role server) {
    NettyChannelBuilder b = NettyChannelBuilder.forAddress(address.host(), address.port());
    security.configure(b, server);
    return b
        .eventLoopGroup(Io.GROUP)
        .channelType(Io.CLIENT)
        .directExecutor()
        .maxInboundMessageSize(MAX_GRPC_MESSAGE_BYTES)
        .keepAliveTime(KEEPALIVE_SECONDS, TimeUnit.SECONDS)
        .keepAliveTimeout(KEEPALIVE_TIMEOUT_SECONDS, TimeUnit.SECONDS)
        .keepAliveWithoutCalls(false)
        .build();
  }

  /**
   * Starts a plaintext server on {@code host:port} ({@code port} 0 picks a free one) with the
   * given services, their callbacks on the transport thread.
   *
   * @throws UncheckedIOException if the address cannot be bound, naming it
   */
  public static Server startServer(String host, int port, List<BindableService> services) {
    return startServer(host, port, services, WireSecurity.PLAINTEXT);
  }

  /**
   * As {@link #startServer(String, int, List)}, secured by {@code security}: with TLS, callers
   * must present a certificate of the cluster's CA, and each call is admitted only from the roles
   * {@link io.atoll.transport.grpc.security.AccessPolicy} allows.
   */
  public static Server startServer(String host, int port, List<BindableService> services, WireSecurity security) {
    NettyServerBuilder b = NettyServerBuilder.forAddress(new InetSocketAddress(host, port))
        .bossEventLoopGroup(Io.GROUP)
        .workerEventLoopGroup(Io.GROUP)
        .channelType(Io.SERVER)
        .directExecutor()
        .maxInboundMessageSize(MAX_GRPC_MESSAGE_BYTES)
        // The server pings too: a sender whose connection stalled is noticed here, its streams
        // cancelled, and nothing more is read from them. No max connection age: pod streams are
        // long-lived, and ending them on a timer would fail what is in flight as OUTCOME_UNKNOWN.
        .keepAliveTime(KEEPALIVE_SECONDS, TimeUnit.SECONDS)
        .keepAliveTimeout(KEEPALIVE_TIMEOUT_SECONDS, TimeUnit.SECONDS)
        // A failed keepalive cancels the connection's streams, but gRPC's close of the connection
        // then waits for resets it never flushes: on a connection that stays silent (a black hole)
        // it is never closed. The idle timer's close flushes them, so such a connection is closed
        // this long after its last stream was cancelled. Connections with a live stream are never
        // idle; a pod's others see traffic more often than this.
        .maxConnectionIdle(MAX_IDLE_SECONDS, TimeUnit.SECONDS)
        .permitKeepAliveTime(KEEPALIVE_SECONDS / 2, TimeUnit.SECONDS)
        .permitKeepAliveWithoutCalls(true);
    services.forEach(b::addService);
    security.configure(b);
    try {
      return b.build().start();
    } catch (IOException e) {
      throw new UncheckedIOException("cannot listen on " + host + ":" + port + ": " + e.getMessage()
          + " (is another process using the port?)", e);
    }
  }

  /** The port a started server listens on. */
  public static int port(Server server) {
    return ((InetSocketAddress) server.getListenSockets().get(0)).getPort();
  }

  /**
   * Returns the channel after cutting short its reconnect back-off if it is failing: gRPC backs
   * off up to two minutes between connection attempts, far longer than a lease, so a peer that is
   * back (a restarted manager, a pod after a blip) would otherwise stay unreachable for minutes.
   * Callers pace their own retries.
   */
  public static ManagedChannel reconnecting(ManagedChannel channel) {
    if (channel.getState(false) == ConnectivityState.TRANSIENT_FAILURE) {
      channel.resetConnectBackoff();
    }
    return channel;
  }

  /**
   * Shuts a channel down without waiting: safe on a transport thread, where waiting for the
   * channel's own transport to end would stall it.
   */
  public static void close(ManagedChannel channel) {
    channel.shutdownNow();
  }

  /** What a fresh TCP connect to an address found. */
  public enum Probe {
    /** Something accepted the connection. */
    LISTENING,
    /** The host answered that nothing listens on the port: no process holds it now. */
    REFUSED,
    /** No answer in time, or another failure: nothing can be concluded. */
    UNKNOWN
  }

  /**
   * Opens and closes one TCP connection to {@code address}, trying each address its host resolves
   * to in turn (a name such as {@code localhost} may resolve to an IPv4 and an IPv6 address, and
   * only one of them may be listened on). A refusal from every one of them is fresh evidence that
   * no process listened on the port at some moment after this call began, which the lease keeper
   * uses to tell a stopped manager from an unreachable one.
   *
   * @param timeoutMillis the bound on the whole probe, over all addresses; at least 1
   * @return {@link Probe#LISTENING} if any address accepted, {@link Probe#REFUSED} only if every
   *     address refused, otherwise (no answer in time, a name that does not resolve, another
   *     failure) {@link Probe#UNKNOWN}
   * @throws IllegalArgumentException if {@code timeoutMillis < 1}
   */
  public static Probe probe(PodAddress address, int timeoutMillis) {
    checkTimeout(timeoutMillis);
    List<InetSocketAddress> candidates;
    try {
      candidates = candidates(address);
    } catch (UnknownHostException | SecurityException e) {
      return Probe.UNKNOWN;
    }
    return probe(candidates, timeoutMillis);
  }

  /** Every socket address {@code address} resolves to, in the resolver's order. */
  static List<InetSocketAddress> candidates(PodAddress address) throws UnknownHostException {
    List<InetSocketAddress> out = new ArrayList<>();
    for (InetAddress a : InetAddress.getAllByName(address.host())) {
      out.add(new InetSocketAddress(a, address.port()));
    }
    return out;
  }

  /** Probes resolved addresses in turn, within {@code timeoutMillis} in all. */
  static Probe probe(List<InetSocketAddress> candidates, int timeoutMillis) {
    checkTimeout(timeoutMillis);
    // Real time bounds a blocking connect: this is I/O, not a decision an injected clock drives.
    long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(timeoutMillis);
    boolean allRefused = !candidates.isEmpty();
    for (InetSocketAddress candidate : candidates) {
      long left = TimeUnit.NANOSECONDS.toMillis(deadline - System.nanoTime());
      if (left < 1) {
        return Probe.UNKNOWN; // a connect timeout of 0 would wait forever
      }
      Probe p = connectOnce(candidate, (int) left);
      if (p == Probe.LISTENING) {
        return p;
      }
      allRefused &= p == Probe.REFUSED;
    }
    return allRefused ? Probe.REFUSED : Probe.UNKNOWN;
  }

  private static void checkTimeout(int timeoutMillis) {
    if (timeoutMillis < 1) {
      throw new IllegalArgumentException("probe timeout: " + timeoutMillis + " ms (expected: >= 1)");
    }
  }

  private static Probe connectOnce(InetSocketAddress address, int timeoutMillis) {
    try (Socket s = new Socket()) {
      s.connect(address, timeoutMillis);
      return Probe.LISTENING;
    } catch (ConnectException e) {
      String m = String.valueOf(e.getMessage());
      return m.contains("refused") ? Probe.REFUSED : Probe.UNKNOWN;
    } catch (IOException | RuntimeException e) {
      return Probe.UNKNOWN; // a timeout (SocketTimeoutException) among them
    }
  }
}
