package io.atoll.transport.grpc.security;

import java.net.Socket;
import java.security.cert.CertificateException;
import java.security.cert.X509Certificate;
import javax.net.ssl.SSLEngine;
import javax.net.ssl.X509ExtendedTrustManager;

/**
 * Trusts a peer whose chain leads to the cluster's CA and, on the client side, whose certificate
 * holds the expected role. Host names are not checked: in an Atoll cluster a peer is who its
 * certificate's role says, issued by the cluster's own CA, whatever address it answers on.
 * Refusals are logged once per peer certificate subject.
 */
final class PeerTrust extends X509ExtendedTrustManager {

  private final TlsMaterial material;
  private final Role expectedServer;
  private final boolean identityRequired;
  private final RefusalLog refusals;

  /**
   * {@code expectedServer} null: the server side (checks clients); {@code identityRequired} false
   * (server side only): a client certificate of the CA need not hold an Atoll identity.
   */
  PeerTrust(TlsMaterial material, Role expectedServer, boolean identityRequired, RefusalLog refusals) {
    this.identityRequired = identityRequired;
    this.material = material;
    this.expectedServer = expectedServer;
    this.refusals = refusals;
  }

  @Override
  public void checkClientTrusted(X509Certificate[] chain, String authType) throws CertificateException {
    check(chain, authType, true);
  }

  @Override
  public void checkClientTrusted(X509Certificate[] chain, String authType, Socket socket) throws CertificateException {
    check(chain, authType, true);
  }

  @Override
  public void checkClientTrusted(X509Certificate[] chain, String authType, SSLEngine engine) throws CertificateException {
    check(chain, authType, true);
  }

  @Override
  public void checkServerTrusted(X509Certificate[] chain, String authType) throws CertificateException {
    check(chain, authType, false);
  }

  @Override
  public void checkServerTrusted(X509Certificate[] chain, String authType, Socket socket) throws CertificateException {
    check(chain, authType, false);
  }

  @Override
  public void checkServerTrusted(X509Certificate[] chain, String authType, SSLEngine engine) throws CertificateException {
    check(chain, authType, false);
  }

  @Override
  public X509Certificate[] getAcceptedIssuers() {
    return material.current().trust().getAcceptedIssuers();
  }

  private void check(X509Certificate[] chain, String authType, boolean client) throws CertificateException {
    String who = chain == null || chain.length == 0 ? "a peer without a certificate"
        : chain[0].getSubjectX500Principal() + " (issuer " + chain[0].getIssuerX500Principal() + ")";
    try {
      // The two-argument checks build and validate the chain against the CA without a host name.
      if (client) {
        material.current().trust().checkClientTrusted(chain, authType);
      } else {
        material.current().trust().checkServerTrusted(chain, authType);
      }
    } catch (CertificateException e) {
      refusals.refuse("ca " + who, "TLS: refused " + (client ? "client " : "server ") + who
          + ": not issued by this cluster's CA (" + e.getMessage() + ")");
      throw e;
    }
    if (client && !identityRequired) {
      return;
    }
    PeerIdentity id;
    try {
      id = Role.of(chain[0]);
    } catch (IllegalArgumentException e) {
      refusals.refuse("id " + who, "TLS: refused " + (client ? "client " : "server ") + who + ": " + e.getMessage());
      throw new CertificateException(e.getMessage(), e);
    }
    if (!client && id.role() != expectedServer) {
      refusals.refuse("role " + id, "TLS: refused server " + id + ": expected role "
          + expectedServer.name().toLowerCase(java.util.Locale.ROOT));
      throw new CertificateException("server " + id + " does not have role "
          + expectedServer.name().toLowerCase(java.util.Locale.ROOT) + " (expected: " + expectedServer.uri("NAME") + ")");
    }
  }
}
