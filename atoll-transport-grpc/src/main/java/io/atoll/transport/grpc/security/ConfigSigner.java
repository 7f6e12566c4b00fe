package io.atoll.transport.grpc.security;

import com.google.protobuf.ByteString;
import io.atoll.core.ClusterConfig;
import io.atoll.core.PodId;
import io.atoll.transport.grpc.Wire;
import io.atoll.transport.grpc.proto.ConfigBytes;
import java.io.ByteArrayOutputStream;
import java.io.DataOutputStream;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.security.GeneralSecurityException;
import java.security.KeyPair;
import java.security.KeyPairGenerator;
import java.security.MessageDigest;
import java.security.PrivateKey;
import java.security.PublicKey;
import java.security.Signature;
import java.util.List;
import javax.crypto.Mac;
import javax.crypto.spec.SecretKeySpec;

/**
 * The manager's key: signs every config it publishes and every Unassign it sends (Ed25519, from
 * the JDK), and issues and checks the credential of each pod incarnation (HMAC-SHA256 under a key
 * derived from the same private key). Nothing of it is stored with the cluster state: managers
 * that share one key file (a standby taking over) verify each other's credentials and signatures;
 * a manager with another key makes pods adopt its key on their next call to it, and makes
 * incarnations registered with the old key register again. Thread-safe.
 */
public final class ConfigSigner {

  static final byte[] CONFIG_CONTEXT = "atoll-config-v1\0".getBytes(StandardCharsets.US_ASCII);
  static final byte[] UNASSIGN_CONTEXT = "atoll-unassign-v1\0".getBytes(StandardCharsets.US_ASCII);

  private final PrivateKey privateKey;
  private final PublicKey publicKey;
  private final ByteString publicKeyBytes;
  private final SecretKeySpec credentialKey;
  private volatile Signed last;

  private record Signed(ClusterConfig config, ConfigBytes bytes) {}

  private ConfigSigner(PrivateKey privateKey, PublicKey publicKey) {
    this.privateKey = privateKey;
    this.publicKey = publicKey;
    this.publicKeyBytes = ByteString.copyFrom(publicKey.getEncoded());
    try {
      MessageDigest d = MessageDigest.getInstance("SHA-256");
      d.update("atoll-credential-v1\0".getBytes(StandardCharsets.US_ASCII));
      d.update(privateKey.getEncoded());
      this.credentialKey = new SecretKeySpec(d.digest(), "HmacSHA256");
    } catch (GeneralSecurityException e) {
      throw new IllegalStateException(e);
    }
  }

  /** A signer with a new random key (a manager started without a key file). */
  public static ConfigSigner generate() {
    try {
      KeyPair kp = KeyPairGenerator.getInstance("Ed25519").generateKeyPair();
      return new ConfigSigner(kp.getPrivate(), kp.getPublic());
    } catch (GeneralSecurityException e) {
      throw new IllegalStateException("Ed25519 is not available in this JDK: " + e, e);
    }
  }

  /**
   * The signer whose Ed25519 key pair is in {@code file}: a PEM {@code PRIVATE KEY} (PKCS#8) and
   * its {@code PUBLIC KEY}, as {@link #newKeyPem} and {@code atoll certs} write {@code signing.key}.
   *
   * @throws IllegalArgumentException if the file holds no Ed25519 key pair, naming it
   */
  public static ConfigSigner load(Path file) {
    PrivateKey k = PemFiles.privateKey(file);
    if (!k.getAlgorithm().equals("Ed25519") && !k.getAlgorithm().equals("EdDSA")) {
      throw new IllegalArgumentException(file + ": a " + k.getAlgorithm() + " key (expected: an Ed25519 private key)");
    }
    PublicKey pub = PemFiles.publicKey(file, "Ed25519");
    ConfigSigner s = new ConfigSigner(k, pub);
    byte[] probe = "probe".getBytes(StandardCharsets.US_ASCII);
    if (!ManagerTrust.verify(pub, CONFIG_CONTEXT, probe, s.sign(CONFIG_CONTEXT, probe))) {
      throw new IllegalArgumentException(file + ": its PUBLIC KEY is not the private key's (expected: one pair)");
    }
    return s;
  }

  /** A new Ed25519 key pair, PEM ({@code PRIVATE KEY}, PKCS#8, then {@code PUBLIC KEY}), for a key file. */
  public static String newKeyPem() {
    ConfigSigner s = generate();
    return PemFiles.pem("PRIVATE KEY", s.privateKey.getEncoded()) + PemFiles.pem("PUBLIC KEY", s.publicKey.getEncoded());
  }

  /** The public key (X.509 SubjectPublicKeyInfo encoding) pods verify with. */
  public ByteString publicKey() {
    return publicKeyBytes;
  }

  /** The verifying key. */
  PublicKey verifyingKey() {
    return publicKey;
  }

  /** {@code config}, encoded and signed; the last one is cached, so a publish to many pods signs once. */
  public ConfigBytes bytes(ClusterConfig config) {
    Signed s = last;
    if (s != null && s.config() == config) {
      return s.bytes();
    }
    ConfigBytes plain = Wire.bytes(config);
    ConfigBytes signed = plain.toBuilder()
        .setSignature(ByteString.copyFrom(sign(CONFIG_CONTEXT, plain.getEncoded().toByteArray())))
        .setSignerKey(publicKeyBytes)
        .build();
    last = new Signed(config, signed);
    return signed;
  }

  /** The signature of an Unassign request with these fields. */
  public ByteString signUnassign(String clusterId, long term, long newEpoch, List<Integer> shards) {
    return ByteString.copyFrom(sign(UNASSIGN_CONTEXT, unassignPayload(clusterId, term, newEpoch, shards)));
  }

  /** What an Unassign signature covers: the cluster, the manager's term, the new epoch and the shards. */
  public static byte[] unassignPayload(String clusterId, long term, long newEpoch, List<Integer> shards) {
    try {
      ByteArrayOutputStream bytes = new ByteArrayOutputStream();
      DataOutputStream out = new DataOutputStream(bytes);
      out.writeUTF(clusterId);
      out.writeLong(term);
      out.writeLong(newEpoch);
      out.writeInt(shards.size());
      for (int s : shards) {
        out.writeInt(s);
      }
      out.flush();
      return bytes.toByteArray();
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  private byte[] sign(byte[] context, byte[] payload) {
    try {
      Signature s = Signature.getInstance("Ed25519");
      s.initSign(privateKey);
      s.update(context);
      s.update(payload);
      return s.sign();
    } catch (GeneralSecurityException e) {
      throw new IllegalStateException("Ed25519 signing failed: " + e, e);
    }
  }

  /**
   * The credential of incarnation {@code pod} of cluster {@code clusterId}, registered by the
   * TLS identity {@code holder} ("" without TLS): a MAC only a holder of this key computes.
   */
  public ByteString credential(String clusterId, PodId pod, String holder) {
    try {
      Mac mac = Mac.getInstance("HmacSHA256");
      mac.init(credentialKey);
      mac.update((clusterId + "\0" + pod.address().host() + "\0" + pod.address().port() + "\0" + pod.incarnation()
          + "\0" + holder).getBytes(StandardCharsets.UTF_8));
      return ByteString.copyFrom(mac.doFinal());
    } catch (GeneralSecurityException e) {
      throw new IllegalStateException("HMAC-SHA256 failed: " + e, e);
    }
  }

  /** Whether {@code presented} is the credential of {@code pod} held by {@code holder} (constant time). */
  public boolean checkCredential(String clusterId, PodId pod, String holder, ByteString presented) {
    return MessageDigest.isEqual(credential(clusterId, pod, holder).toByteArray(), presented.toByteArray());
  }
}
