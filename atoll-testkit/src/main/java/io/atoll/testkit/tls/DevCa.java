package io.atoll.testkit.tls;

import io.atoll.transport.grpc.security.PemFiles;
import io.atoll.transport.grpc.security.Role;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.math.BigInteger;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.attribute.PosixFilePermissions;
import java.security.GeneralSecurityException;
import java.security.KeyPair;
import java.security.KeyPairGenerator;
import java.security.PrivateKey;
import java.security.SecureRandom;
import java.security.cert.X509Certificate;
import java.security.spec.ECGenParameterSpec;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Date;
import java.util.List;
import java.util.Objects;
import org.bouncycastle.asn1.x500.X500Name;
import org.bouncycastle.asn1.x509.BasicConstraints;
import org.bouncycastle.asn1.x509.ExtendedKeyUsage;
import org.bouncycastle.asn1.x509.Extension;
import org.bouncycastle.asn1.x509.GeneralName;
import org.bouncycastle.asn1.x509.GeneralNames;
import org.bouncycastle.asn1.x509.KeyPurposeId;
import org.bouncycastle.asn1.x509.KeyUsage;
import org.bouncycastle.cert.X509CertificateHolder;
import org.bouncycastle.cert.X509v3CertificateBuilder;
import org.bouncycastle.cert.jcajce.JcaX509CertificateConverter;
import org.bouncycastle.cert.jcajce.JcaX509ExtensionUtils;
import org.bouncycastle.cert.jcajce.JcaX509v3CertificateBuilder;
import org.bouncycastle.operator.OperatorCreationException;
import org.bouncycastle.operator.jcajce.JcaContentSignerBuilder;

/**
 * A development certificate authority: an ECDSA P-256 CA and the certificates of an Atoll
 * cluster's processes, each holding its role as a subject alternative name URI
 * ({@code atoll:manager}, {@code atoll:pod:NAME}, {@code atoll:admin:NAME}), usable for both TLS
 * client and server authentication, with {@code localhost} and {@code 127.0.0.1} as names. For
 * tests, demos and first steps; production clusters use their own CA (any CA that writes the
 * same URIs works). Built with BouncyCastle; the private keys stay in the JDK's providers.
 * Thread-safe.
 */
public final class DevCa {

  /** The CA certificate's file name in a certificates directory. */
  public static final String CA_CERT = "ca.pem";
  /** The CA key's file name: whoever holds it can issue any role. */
  public static final String CA_KEY = "ca.key";

  private static final SecureRandom RANDOM = new SecureRandom();

  private final X509Certificate cert;
  private final PrivateKey key;
  private final Duration validity;

  private DevCa(X509Certificate cert, PrivateKey key, Duration validity) {
    this.cert = cert;
    this.key = key;
    this.validity = validity;
  }

  /** A new CA named {@code name}, whose certificates are valid for {@code validity}. */
  public static DevCa create(String name, Duration validity) {
    Objects.requireNonNull(name, "name");
    if (validity.isNegative() || validity.isZero()) {
      throw new IllegalArgumentException("validity: " + validity + " (expected: > 0)");
    }
    try {
      KeyPair kp = newKeyPair();
      X500Name subject = new X500Name("CN=" + name + ",O=Atoll development CA");
      Instant now = Instant.now();
      JcaX509ExtensionUtils ext = new JcaX509ExtensionUtils();
      X509v3CertificateBuilder b = new JcaX509v3CertificateBuilder(subject, serial(),
          Date.from(now.minus(Duration.ofMinutes(5))), Date.from(now.plus(validity)), subject, kp.getPublic())
          .addExtension(Extension.basicConstraints, true, new BasicConstraints(0))
          .addExtension(Extension.keyUsage, true, new KeyUsage(KeyUsage.keyCertSign | KeyUsage.cRLSign))
          .addExtension(Extension.subjectKeyIdentifier, false, ext.createSubjectKeyIdentifier(kp.getPublic()));
      return new DevCa(sign(b, kp.getPrivate()), kp.getPrivate(), validity);
    } catch (GeneralSecurityException | IOException | OperatorCreationException e) {
      throw new IllegalStateException("cannot create a CA: " + e, e);
    }
  }

  /**
   * The CA stored in {@code dir} by {@link #writeCa}.
   *
   * @throws IllegalArgumentException if its files are missing or unreadable, naming them
   */
  public static DevCa load(Path dir, Duration validity) {
    X509Certificate c = PemFiles.certificates(dir.resolve(CA_CERT)).get(0);
    PrivateKey k = PemFiles.privateKey(dir.resolve(CA_KEY));
    return new DevCa(c, k, validity);
  }

  /** This CA's certificate. */
  public X509Certificate certificate() {
    return cert;
  }

  /** A certificate and its private key. */
  public record Issued(X509Certificate certificate, PrivateKey key) {
    /** Writes {@code NAME.pem} and {@code NAME.key} (owner-only) into {@code dir}. */
    public void write(Path dir, String name) {
      writeFile(dir.resolve(name + ".pem"), pem(certificate), false);
      writeFile(dir.resolve(name + ".key"), PemFiles.pem("PRIVATE KEY", key.getEncoded()), true);
    }
  }

  /**
   * Issues a certificate giving {@code name} the role {@code role} (the name is ignored for the
   * manager), for TLS clients and servers, naming {@code localhost}, {@code 127.0.0.1} and the
   * extra {@code hosts} (DNS names or IP addresses).
   */
  public Issued issue(Role role, String name, List<String> hosts) {
    String uri = role.uri(name);
    try {
      KeyPair kp = newKeyPair();
      Instant now = Instant.now();
      List<GeneralName> names = new ArrayList<>();
      names.add(new GeneralName(GeneralName.uniformResourceIdentifier, uri));
      names.add(new GeneralName(GeneralName.dNSName, "localhost"));
      names.add(new GeneralName(GeneralName.iPAddress, "127.0.0.1"));
      for (String h : hosts) {
        boolean ip = h.matches("[0-9.]+") || h.contains(":");
        names.add(new GeneralName(ip ? GeneralName.iPAddress : GeneralName.dNSName, h));
      }
      JcaX509ExtensionUtils ext = new JcaX509ExtensionUtils();
      X509v3CertificateBuilder b = new JcaX509v3CertificateBuilder(cert, serial(),
          Date.from(now.minus(Duration.ofMinutes(5))), Date.from(now.plus(validity)),
          new X500Name("CN=" + (role == Role.MANAGER ? "manager" : name) + ",OU=" + role.name().toLowerCase(
              java.util.Locale.ROOT) + ",O=Atoll"), kp.getPublic())
          .addExtension(Extension.basicConstraints, true, new BasicConstraints(false))
          .addExtension(Extension.keyUsage, true, new KeyUsage(KeyUsage.digitalSignature))
          .addExtension(Extension.extendedKeyUsage, false, new ExtendedKeyUsage(
              new KeyPurposeId[] {KeyPurposeId.id_kp_serverAuth, KeyPurposeId.id_kp_clientAuth}))
          .addExtension(Extension.subjectAlternativeName, false, new GeneralNames(names.toArray(new GeneralName[0])))
          .addExtension(Extension.authorityKeyIdentifier, false, ext.createAuthorityKeyIdentifier(cert))
          .addExtension(Extension.subjectKeyIdentifier, false, ext.createSubjectKeyIdentifier(kp.getPublic()));
      return new Issued(sign(b, key), kp.getPrivate());
    } catch (GeneralSecurityException | IOException | OperatorCreationException e) {
      throw new IllegalStateException("cannot issue " + uri + ": " + e, e);
    }
  }

  /** Writes {@code ca.pem} and {@code ca.key} (owner-only) into {@code dir}, creating it. */
  public void writeCa(Path dir) {
    writeFile(dir.resolve(CA_CERT), pem(cert), false);
    writeFile(dir.resolve(CA_KEY), PemFiles.pem("PRIVATE KEY", key.getEncoded()), true);
  }

  private static KeyPair newKeyPair() throws GeneralSecurityException {
    KeyPairGenerator g = KeyPairGenerator.getInstance("EC");
    g.initialize(new ECGenParameterSpec("secp256r1"), RANDOM);
    return g.generateKeyPair();
  }

  private static BigInteger serial() {
    return new BigInteger(127, RANDOM).add(BigInteger.ONE);
  }

  private static X509Certificate sign(X509v3CertificateBuilder b, PrivateKey signer)
      throws OperatorCreationException, GeneralSecurityException {
    X509CertificateHolder h = b.build(new JcaContentSignerBuilder("SHA256withECDSA").build(signer));
    return new JcaX509CertificateConverter().getCertificate(h);
  }

  private static String pem(X509Certificate c) {
    try {
      return PemFiles.pem("CERTIFICATE", c.getEncoded());
    } catch (GeneralSecurityException e) {
      throw new IllegalStateException(e);
    }
  }

  static void writeFile(Path file, String text, boolean secret) {
    try {
      Files.createDirectories(file.toAbsolutePath().getParent());
      Path tmp = file.resolveSibling(file.getFileName() + ".tmp");
      Files.writeString(tmp, text, StandardCharsets.US_ASCII);
      if (secret) {
        try {
          Files.setPosixFilePermissions(tmp, PosixFilePermissions.fromString("rw-------"));
        } catch (UnsupportedOperationException e) {
          // not a POSIX file system
        }
      }
      // Atomic, so a process reloading rotated files never reads half of one.
      Files.move(tmp, file, StandardCopyOption.REPLACE_EXISTING, StandardCopyOption.ATOMIC_MOVE);
    } catch (IOException e) {
      throw new UncheckedIOException("cannot write " + file + ": " + e.getMessage(), e);
    }
  }
}
