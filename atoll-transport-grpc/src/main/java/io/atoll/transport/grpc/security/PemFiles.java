package io.atoll.transport.grpc.security;

import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.GeneralSecurityException;
import java.security.KeyFactory;
import java.security.PrivateKey;
import java.security.PublicKey;
import java.security.cert.CertificateException;
import java.security.cert.CertificateFactory;
import java.security.cert.X509Certificate;
import java.security.spec.PKCS8EncodedKeySpec;
import java.security.spec.X509EncodedKeySpec;
import java.util.ArrayList;
import java.util.Base64;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/** Reads PEM certificates and PKCS#8 private keys with the JDK alone. Stateless. */
public final class PemFiles {

  /** The largest PEM file read, so a wrong path (a disk image) fails fast. */
  static final long MAX_BYTES = 1 << 20;
  private static final Pattern KEY = Pattern.compile(
      "-----BEGIN PRIVATE KEY-----([A-Za-z0-9+/=\\s]+)-----END PRIVATE KEY-----");

  private static final Pattern PUBLIC = Pattern.compile(
      "-----BEGIN PUBLIC KEY-----([A-Za-z0-9+/=\\s]+)-----END PUBLIC KEY-----");

  private PemFiles() {}

  /**
   * Every certificate in a PEM file, in file order.
   *
   * @throws IllegalArgumentException if the file cannot be read or holds no certificate, naming it
   */
  public static List<X509Certificate> certificates(Path file) {
    byte[] bytes = read(file);
    try (InputStream in = new ByteArrayInputStream(bytes)) {
      List<X509Certificate> out = new ArrayList<>();
      for (var c : CertificateFactory.getInstance("X.509").generateCertificates(in)) {
        out.add((X509Certificate) c);
      }
      if (out.isEmpty()) {
        throw new IllegalArgumentException(file + ": no certificate (expected: PEM, -----BEGIN CERTIFICATE-----)");
      }
      return out;
    } catch (CertificateException | IOException e) {
      throw new IllegalArgumentException(file + ": not a PEM certificate file: " + e.getMessage(), e);
    }
  }

  /**
   * The private key in a PEM file ({@code -----BEGIN PRIVATE KEY-----}, unencrypted PKCS#8; EC,
   * RSA or Ed25519).
   *
   * @throws IllegalArgumentException if the file cannot be read or holds no such key, naming it
   */
  public static PrivateKey privateKey(Path file) {
    String text = new String(read(file), StandardCharsets.US_ASCII);
    Matcher m = KEY.matcher(text);
    if (!m.find()) {
      throw new IllegalArgumentException(file + ": no private key (expected: PEM, -----BEGIN PRIVATE KEY-----,"
          + " unencrypted PKCS#8; convert with openssl pkcs8 -topk8 -nocrypt)");
    }
    byte[] der = Base64.getMimeDecoder().decode(m.group(1));
    for (String alg : List.of("EC", "RSA", "Ed25519")) {
      try {
        return KeyFactory.getInstance(alg).generatePrivate(new PKCS8EncodedKeySpec(der));
      } catch (GeneralSecurityException e) {
        // try the next algorithm
      }
    }
    throw new IllegalArgumentException(file + ": unreadable private key (expected: EC, RSA or Ed25519 PKCS#8)");
  }

  /**
   * The public key of algorithm {@code algorithm} in a PEM file ({@code -----BEGIN PUBLIC KEY-----}).
   *
   * @throws IllegalArgumentException if the file holds none, naming it
   */
  public static PublicKey publicKey(Path file, String algorithm) {
    String text = new String(read(file), StandardCharsets.US_ASCII);
    Matcher m = PUBLIC.matcher(text);
    if (!m.find()) {
      throw new IllegalArgumentException(file + ": no public key (expected: PEM, -----BEGIN PUBLIC KEY-----)");
    }
    try {
      return KeyFactory.getInstance(algorithm).generatePublic(
          new X509EncodedKeySpec(Base64.getMimeDecoder().decode(m.group(1))));
    } catch (GeneralSecurityException | IllegalArgumentException e) {
      throw new IllegalArgumentException(file + ": unreadable public key (expected: " + algorithm + "): " + e, e);
    }
  }

  /** The PEM text of DER bytes under {@code label}. */
  public static String pem(String label, byte[] der) {
    return "-----BEGIN " + label + "-----\n" + Base64.getMimeEncoder(64, new byte[] {'\n'}).encodeToString(der)
        + "\n-----END " + label + "-----\n";
  }

  static byte[] read(Path file) {
    try {
      long size = Files.size(file);
      if (size > MAX_BYTES) {
        throw new IllegalArgumentException(file + ": " + size + " bytes (expected: a PEM file of <= " + MAX_BYTES + ")");
      }
      return Files.readAllBytes(file);
    } catch (IOException e) {
      throw new IllegalArgumentException("cannot read " + file + ": " + e, e);
    }
  }
}
