package io.atoll.transport.grpc.security;

import io.grpc.netty.shaded.io.grpc.netty.GrpcSslContexts;
import io.grpc.netty.shaded.io.grpc.netty.NettyChannelBuilder;
import io.grpc.netty.shaded.io.grpc.netty.NettyServerBuilder;
import io.grpc.netty.shaded.io.netty.handler.ssl.ClientAuth;
import io.grpc.netty.shaded.io.netty.handler.ssl.SslContext;
import io.grpc.netty.shaded.io.netty.handler.ssl.SslContextBuilder;
import io.grpc.netty.shaded.io.netty.handler.ssl.SslProvider;
import java.nio.file.Path;
import java.util.EnumMap;
import java.util.Map;
import java.util.function.Consumer;
import javax.net.ssl.SSLException;

/**
 * How one process secures its gRPC connections: {@link #PLAINTEXT}, or mutual TLS with a
 * certificate of the cluster's CA whose role ({@link Role}) says what the process is. With TLS,
 * every server asks for a client certificate and admits each call only from the roles
 * {@link AccessPolicy} allows, and every client checks that the server holds the role it expects
 * (a pod talking to "the manager" reaches a manager). Certificates and keys are PEM files, loaded
 * again when they change (rotation). Immutable and thread-safe.
 */
public final class WireSecurity {

  /** No TLS and no identities: anyone who reaches a port may call it. */
  public static final WireSecurity PLAINTEXT = new WireSecurity(null, s -> {});

  private final TlsMaterial material;
  private final RefusalLog refusals;
  private final Map<Role, SslContext> clients = new EnumMap<>(Role.class);
  private SslContext server;

  private WireSecurity(TlsMaterial material, Consumer<String> sink) {
    this.material = material;
    this.refusals = new RefusalLog(sink);
  }

  /**
   * Mutual TLS with the given PEM files.
   *
   * @param ca the cluster's CA certificate(s): peers must present a certificate it issued
   * @param cert this process' certificate (chain), holding its role
   * @param key this certificate's private key (unencrypted PKCS#8)
   * @throws IllegalArgumentException if a file cannot be read, the key does not fit the
   *     certificate, the certificate holds no role or is not issued by the CA, naming the file
   */
  public static WireSecurity tls(Path ca, Path cert, Path key) {
    return new WireSecurity(new TlsMaterial(ca, cert, key), s -> {});
  }

  /** This security, also handing each logged refusal line to {@code sink} (for tests). */
  public WireSecurity withRefusalSink(Consumer<String> sink) {
    return material == null ? this : new WireSecurity(material, sink);
  }

  /** Whether connections use TLS. */
  public boolean isTls() {
    return material != null;
  }

  /** This process' identity, or null without TLS. */
  public PeerIdentity self() {
    return material == null ? null : material.current().self();
  }

  /**
   * The identity of the peer whose call the current thread serves (read inside a service
   * method), or null without TLS.
   */
  public static PeerIdentity peer() {
    return AccessInterceptor.PEER.get();
  }

  /**
   * Logs a refusal of a call by a service (a wrong credential, a forged request), once per
   * {@code key} (the peer and what it tried).
   */
  public void refuse(String key, String line) {
    refusals.refuse(key, line);
  }

  /** The name under which the current call's peer acts: its identity with TLS, "" without. */
  public static String peerName() {
    PeerIdentity p = peer();
    return p == null ? "" : p.toString();
  }

  /** Secures a server: TLS with client certificates, and the access policy. Internal to Atoll. */
  public void configure(NettyServerBuilder b) {
    if (material == null) {
      return;
    }
    b.sslContext(serverContext());
    b.intercept(new AccessInterceptor(refusals));
  }

  /**
   * Secures a channel to a server that must hold {@code server}'s role, or makes it plaintext.
   * Internal to Atoll.
   */
  public void configure(NettyChannelBuilder b, Role server) {
    if (material == null) {
      b.usePlaintext();
      return;
    }
    b.sslContext(clientContext(server));
    b.overrideAuthority("atoll"); // host names are not checked (see PeerTrust); keep SNI constant
  }

  private synchronized SslContext serverContext() {
    if (server == null) {
      try {
        server = GrpcSslContexts.configure(SslContextBuilder.forServer(material.keyManager()), SslProvider.JDK)
            .trustManager(material.clientTrust(refusals))
            // Optional at the TLS layer so that a caller without a certificate gets a clear
            // UNAUTHENTICATED from AccessInterceptor instead of a bare handshake failure.
            .clientAuth(ClientAuth.OPTIONAL)
            .build();
      } catch (SSLException e) {
        throw new IllegalStateException("TLS server context: " + e.getMessage(), e);
      }
    }
    return server;
  }

  private synchronized SslContext clientContext(Role role) {
    return clients.computeIfAbsent(role, r -> {
      try {
        return GrpcSslContexts.configure(SslContextBuilder.forClient().keyManager(material.keyManager()),
                SslProvider.JDK)
            .trustManager(material.serverTrust(r, refusals))
            .build();
      } catch (SSLException e) {
        throw new IllegalStateException("TLS client context: " + e.getMessage(), e);
      }
    });
  }

  @Override
  public String toString() {
    return material == null ? "plaintext" : "mutual TLS as " + self();
  }
}
