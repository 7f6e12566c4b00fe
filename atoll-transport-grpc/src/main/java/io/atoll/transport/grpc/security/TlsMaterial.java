package io.atoll.transport.grpc.security;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.FileTime;
import java.security.GeneralSecurityException;
import java.security.KeyStore;
import java.security.PrivateKey;
import java.security.SecureRandom;
import java.security.Signature;
import java.security.cert.X509Certificate;
import java.util.List;
import java.util.Objects;
import javax.net.ssl.KeyManagerFactory;
import javax.net.ssl.TrustManager;
import javax.net.ssl.TrustManagerFactory;
import javax.net.ssl.X509ExtendedKeyManager;
import javax.net.ssl.X509ExtendedTrustManager;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The CA, certificate and key files of one process, loaded and checked, and loaded again when a
 * file changes (rotation): every new TLS handshake uses the newest files that load and check; a
 * rotation that does not (a half-written file) keeps the previous material and logs why.
 * Thread-safe.
 */
final class TlsMaterial {

  private static final Logger log = LoggerFactory.getLogger("io.atoll.security");
  private static final long CHECK_NANOS = 1_000_000_000L;

  /** One consistent load of the three files; {@code self} null for a certificate without an Atoll identity. */
  record Loaded(X509ExtendedKeyManager keys, X509ExtendedTrustManager trust, PeerIdentity self,
      List<FileTime> stamps) {}

  private final Path ca;
  private final Path cert;
  private final Path key;
  private final boolean identityRequired;
  private volatile Loaded loaded;
  private volatile long lastCheck;

  /** Loads the files. @throws IllegalArgumentException if they do not load or do not fit together */
  TlsMaterial(Path ca, Path cert, Path key) {
    this(ca, cert, key, true);
  }

  /**
   * Loads the files; {@code identityRequired} false also takes a certificate without an Atoll
   * identity (a TLS port for any client, such as Atoll KV's).
   *
   * @throws IllegalArgumentException if they do not load or do not fit together
   */
  TlsMaterial(Path ca, Path cert, Path key, boolean identityRequired) {
    this.identityRequired = identityRequired;
    this.ca = Objects.requireNonNull(ca, "ca");
    this.cert = Objects.requireNonNull(cert, "cert");
    this.key = Objects.requireNonNull(key, "key");
    this.loaded = load();
    this.lastCheck = System.nanoTime();
  }

  /** The newest material (checks the files' times at most once a second). */
  Loaded current() {
    long now = System.nanoTime();
    if (now - lastCheck < CHECK_NANOS) {
      return loaded;
    }
    lastCheck = now;
    Loaded l = loaded;
    if (!stamps().equals(l.stamps())) {
      try {
        Loaded next = load();
        loaded = next;
        log.info("TLS files reloaded: {} as {}", cert, next.self() != null ? next.self()
            : next.keys().getCertificateChain("atoll")[0].getSubjectX500Principal());
        return next;
      } catch (IllegalArgumentException e) {
        log.warn("TLS files changed but do not load, keeping the previous ones: {}", e.getMessage());
      }
    }
    return l;
  }

  private List<FileTime> stamps() {
    try {
      return List.of(Files.getLastModifiedTime(ca), Files.getLastModifiedTime(cert), Files.getLastModifiedTime(key));
    } catch (IOException e) {
      return List.of();
    }
  }

  private Loaded load() {
    List<FileTime> stamps = stamps();
    List<X509Certificate> cas = PemFiles.certificates(ca);
    List<X509Certificate> chain = PemFiles.certificates(cert);
    PrivateKey pk = PemFiles.privateKey(key);
    X509Certificate leaf = chain.get(0);
    PeerIdentity self = identityRequired || Role.holdsIdentity(leaf) ? Role.of(leaf) : null;
    checkPair(leaf, pk);
    checkIssued(leaf, cas);
    try {
      char[] pass = new char[0];
      KeyStore ks = KeyStore.getInstance("PKCS12");
      ks.load(null, null);
      ks.setKeyEntry("atoll", pk, pass, chain.toArray(new X509Certificate[0]));
      KeyManagerFactory kmf = KeyManagerFactory.getInstance(KeyManagerFactory.getDefaultAlgorithm());
      kmf.init(ks, pass);
      KeyStore ts = KeyStore.getInstance("PKCS12");
      ts.load(null, null);
      for (int i = 0; i < cas.size(); i++) {
        ts.setCertificateEntry("ca" + i, cas.get(i));
      }
      TrustManagerFactory tmf = TrustManagerFactory.getInstance(TrustManagerFactory.getDefaultAlgorithm());
      tmf.init(ts);
      return new Loaded(only(kmf.getKeyManagers(), X509ExtendedKeyManager.class),
          only(tmf.getTrustManagers(), X509ExtendedTrustManager.class), self, stamps);
    } catch (GeneralSecurityException | IOException e) {
      throw new IllegalArgumentException("cannot use " + cert + " with " + key + " and CA " + ca + ": " + e, e);
    }
  }

  private void checkPair(X509Certificate leaf, PrivateKey pk) {
    try {
      String alg = switch (pk.getAlgorithm()) {
        case "EC" -> "SHA256withECDSA";
        case "RSA" -> "SHA256withRSA";
        default -> pk.getAlgorithm();
      };
      byte[] probe = new byte[32];
      new SecureRandom().nextBytes(probe);
      Signature s = Signature.getInstance(alg);
      s.initSign(pk);
      s.update(probe);
      byte[] sig = s.sign();
      Signature v = Signature.getInstance(alg);
      v.initVerify(leaf.getPublicKey());
      v.update(probe);
      if (!v.verify(sig)) {
        throw new IllegalArgumentException(key + " is not the private key of " + cert + " (expected: the pair that"
            + " atoll certs wrote together)");
      }
    } catch (GeneralSecurityException e) {
      throw new IllegalArgumentException(key + " does not fit " + cert + ": " + e.getMessage(), e);
    }
  }

  private void checkIssued(X509Certificate leaf, List<X509Certificate> cas) {
    for (X509Certificate c : cas) {
      try {
        leaf.verify(c.getPublicKey());
        leaf.checkValidity();
        return;
      } catch (GeneralSecurityException e) {
        // try the next CA certificate
      }
    }
    throw new IllegalArgumentException(cert + " (" + leaf.getSubjectX500Principal() + ") is not signed by the CA in "
        + ca + ", or is expired (expected: a certificate of this cluster's CA, valid now)");
  }

  private static <T> T only(Object[] managers, Class<T> type) {
    for (Object m : managers) {
      if (type.isInstance(m)) {
        return type.cast(m);
      }
    }
    throw new IllegalStateException("no " + type.getSimpleName() + " from the JDK");
  }

  /** A key manager that always uses the newest files. */
  ReloadingKeyManager keyManager() {
    return new ReloadingKeyManager(this);
  }

  /** Server side: trusts clients of the CA that hold an Atoll identity, logs others once. */
  TrustManager clientTrust(RefusalLog refusals) {
    return new PeerTrust(this, null, true, refusals);
  }

  /** Server side: trusts any client certificate of the CA (with or without an identity). */
  PeerTrust anyClientTrust(RefusalLog refusals) {
    return new PeerTrust(this, null, false, refusals);
  }

  /** Client side: trusts servers of the CA that hold {@code expected}. */
  PeerTrust serverTrust(Role expected, RefusalLog refusals) {
    return new PeerTrust(this, expected, true, refusals);
  }
}
