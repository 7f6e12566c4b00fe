package io.atoll.transport.grpc.security;

import io.grpc.Context;
import io.grpc.Contexts;
import io.grpc.Grpc;
import io.grpc.Metadata;
import io.grpc.ServerCall;
import io.grpc.ServerCallHandler;
import io.grpc.ServerInterceptor;
import io.grpc.Status;
import java.security.cert.Certificate;
import java.security.cert.X509Certificate;
import java.util.Locale;
import java.util.Set;
import java.util.stream.Collectors;
import javax.net.ssl.SSLPeerUnverifiedException;
import javax.net.ssl.SSLSession;

/**
 * Admits a call only from a peer whose verified certificate holds a role {@link AccessPolicy}
 * allows for the method; refuses others with UNAUTHENTICATED (no certificate) or PERMISSION_DENIED
 * (the wrong role), logging each refused peer once. An admitted call runs with the peer's identity
 * in {@link WireSecurity#peer()}.
 */
final class AccessInterceptor implements ServerInterceptor {

  static final Context.Key<PeerIdentity> PEER = Context.key("atoll-peer");

  private final RefusalLog refusals;

  AccessInterceptor(RefusalLog refusals) {
    this.refusals = refusals;
  }

  @Override
  public <Q, R> ServerCall.Listener<Q> interceptCall(ServerCall<Q, R> call, Metadata headers,
      ServerCallHandler<Q, R> next) {
    String method = call.getMethodDescriptor().getFullMethodName();
    Object remote = call.getAttributes().get(Grpc.TRANSPORT_ATTR_REMOTE_ADDR);
    SSLSession session = call.getAttributes().get(Grpc.TRANSPORT_ATTR_SSL_SESSION);
    X509Certificate leaf = null;
    if (session != null) {
      try {
        Certificate[] chain = session.getPeerCertificates();
        if (chain.length > 0 && chain[0] instanceof X509Certificate x) {
          leaf = x;
        }
      } catch (SSLPeerUnverifiedException e) {
        // no client certificate
      }
    }
    if (leaf == null) {
      refusals.refuse("anon " + hostOf(remote), "TLS: refused " + method + " from " + remote
          + ": no client certificate");
      return close(call, Status.UNAUTHENTICATED.withDescription(method
          + " needs a client certificate of this cluster's CA (atoll certs; --tls-cert and --tls-key)"));
    }
    PeerIdentity id;
    try {
      id = Role.of(leaf);
    } catch (IllegalArgumentException e) {
      refusals.refuse("noid " + leaf.getSubjectX500Principal(), "TLS: refused " + method + " from " + remote + ": "
          + e.getMessage());
      return close(call, Status.UNAUTHENTICATED.withDescription(e.getMessage()));
    }
    Set<Role> allowed = AccessPolicy.allowed(method);
    if (!allowed.contains(id.role())) {
      String need = allowed.isEmpty() ? "no role (unknown method)"
          : allowed.stream().map(r -> r.name().toLowerCase(Locale.ROOT)).collect(Collectors.joining(" or "));
      refusals.refuse("role " + id + " " + method, "TLS: refused " + method + " from " + id + " at " + remote
          + ": needs role " + need);
      return close(call, Status.PERMISSION_DENIED.withDescription(method + " needs role " + need + "; the caller is "
          + id));
    }
    return Contexts.interceptCall(Context.current().withValue(PEER, id), call, headers, next);
  }

  private static String hostOf(Object remote) {
    return remote instanceof java.net.InetSocketAddress a ? a.getHostString() : String.valueOf(remote);
  }

  private static <Q, R> ServerCall.Listener<Q> close(ServerCall<Q, R> call, Status status) {
    call.close(status, new Metadata());
    return new ServerCall.Listener<>() {};
  }
}
