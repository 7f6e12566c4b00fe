package io.atoll.transport.grpc.security;

import java.nio.file.Path;
import java.security.GeneralSecurityException;
import java.security.SecureRandom;
import java.security.cert.X509Certificate;
import javax.net.ssl.KeyManager;
import javax.net.ssl.SSLContext;
import javax.net.ssl.TrustManager;
import javax.net.ssl.X509ExtendedKeyManager;
import javax.net.ssl.X509ExtendedTrustManager;

/**
 * The CA, certificate and key files of a TLS endpoint that is not gRPC (Atoll KV's RESP port and
 * its hand-offs), as JDK key and trust managers, loaded again when the files change exactly as
 * {@link WireSecurity}'s are (the same material): every new handshake uses the newest files that
 * load and check, and a rotation that does not load keeps the previous files and logs why.
 *
 * <p>Unlike {@link WireSecurity}, the certificate need not hold an Atoll identity, and the
 * {@link #clientTrust() client trust} takes any client certificate the CA issued: such a port serves
 * clients (redis-cli, Lettuce, Jedis) that are not members of the cluster. The certificate must be
 * issued by the CA, so that members can authenticate each other with it. Thread-safe.
 */
public final class TlsFiles {

  private final TlsMaterial material;
  private final RefusalLog refusals = new RefusalLog(s -> {});

  private TlsFiles(TlsMaterial material) {
    this.material = material;
  }

  /**
   * Loads and checks the files.
   *
   * @param ca the CA certificate(s): peers' certificates must be issued by it, and so must {@code cert}
   * @param cert this endpoint's certificate (chain, PEM)
   * @param key its private key (PEM, unencrypted PKCS#8)
   * @throws IllegalArgumentException naming the file if one does not load, the key does not fit
   *     the certificate, or the certificate is not issued by the CA or expired
   */
  public static TlsFiles load(Path ca, Path cert, Path key) {
    return new TlsFiles(new TlsMaterial(ca, cert, key, false));
  }

  /** The Atoll identity the current certificate holds, or null if it holds none. */
  public PeerIdentity identity() {
    return material.current().self();
  }

  /** The current certificate (the leaf of the chain). */
  public X509Certificate certificate() {
    return material.current().keys().getCertificateChain("atoll")[0];
  }

  /** A key manager presenting the newest certificate and key at every handshake. */
  public X509ExtendedKeyManager keyManager() {
    return material.keyManager();
  }

  /**
   * Server side: trusts a client certificate issued by the CA (the newest CA file), with or without
   * an Atoll identity.
   */
  public X509ExtendedTrustManager clientTrust() {
    return material.anyClientTrust(refusals);
  }

  /**
   * Client side: trusts a server whose certificate is issued by the CA and holds {@code role}
   * (host names are not checked: a member is what its certificate says).
   */
  public X509ExtendedTrustManager serverTrust(Role role) {
    return material.serverTrust(role, refusals);
  }

  /**
   * A client TLS context that presents this certificate and trusts servers of the CA holding
   * {@code role}: mutual TLS between members of a cluster.
   */
  public SSLContext clientContext(Role role) {
    try {
      SSLContext ctx = SSLContext.getInstance("TLS");
      ctx.init(new KeyManager[] {keyManager()}, new TrustManager[] {serverTrust(role)}, new SecureRandom());
      return ctx;
    } catch (GeneralSecurityException e) {
      throw new IllegalStateException("TLS client context: " + e.getMessage(), e);
    }
  }

  @Override
  public String toString() {
    PeerIdentity id = identity();
    return "TLS files of " + (id != null ? id : certificate().getSubjectX500Principal());
  }
}
