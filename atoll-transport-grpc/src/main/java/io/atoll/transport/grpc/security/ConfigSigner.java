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
import java.security.KeyFactory;
import java.security.KeyPair;
import java.security.KeyPairGenerator;
import java.security.MessageDigest;
import java.security.PrivateKey;
import java.security.PublicKey;
import java.security.Signature;
import java.security.spec.PKCS8EncodedKeySpec;
import java.security.spec.X509EncodedKeySpec;
import java.util.Base64;
import java.util.List;
import javax.crypto.Mac;
import javax.crypto.spec.SecretKeySpec;

/**
 * The manager's key: signs every config it publishes and every Unassign it sends (Ed25519, from
 * the JDK), and issues and checks the credential of each pod incarnation (HMAC-SHA256 under a key
 * derived from the same private key). Managers that share one key (one key file, or the key the
 * first manager kept in the store, see {@link #encodedKey()}) verify each other's credentials and
 * signatures; a manager with another key makes pods adopt its key on their next call to it, and
 * makes incarnations registered with the old key register again. Thread-safe.
 */
public final class ConfigSigner {

  static final byte[] CONFIG_CONTEXT = "atoll-config-v1\0".getBytes(StandardCharsets.US_ASCII);
  static final byte[] UNASSIGN_CONTEXT = "atoll-unassign-v2\0".getBytes(StandardCharsets.US_ASCII);

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

  /**
   * The key pair as one line of text (Base64 PKCS#8 private key, a space, Base64 X.509 public
   * key), for a manager that keeps its cluster's key in the store; {@link #fromEncodedKey} reads it.
   */
  public String encodedKey() {
    Base64.Encoder b = Base64.getEncoder();
    return b.encodeToString(privateKey.getEncoded()) + " " + b.encodeToString(publicKey.getEncoded());
  }

  /**
   * The signer of a key pair written by {@link #encodedKey()}.
   *
   * @throws IllegalArgumentException if {@code encoded} is not an Ed25519 key pair in that form
   */
  public static ConfigSigner fromEncodedKey(String encoded) {
    String[] parts = encoded.split(" ", -1);
    if (parts.length != 2) {
      throw new IllegalArgumentException("signing key: " + parts.length + " parts (expected: 2, private and public)");
    }
    ConfigSigner s;
    try {
      KeyFactory f = KeyFactory.getInstance("Ed25519");
      Base64.Decoder b = Base64.getDecoder();
      s = new ConfigSigner(f.generatePrivate(new PKCS8EncodedKeySpec(b.decode(parts[0]))),
          f.generatePublic(new X509EncodedKeySpec(b.decode(parts[1]))));
    } catch (GeneralSecurityException | IllegalArgumentException e) {
      throw new IllegalArgumentException("signing key: " + e.getMessage() + " (expected: an Ed25519 key pair)", e);
    }
    byte[] probe = "probe".getBytes(StandardCharsets.US_ASCII);
    if (!ManagerTrust.verify(s.publicKey, CONFIG_CONTEXT, probe, s.sign(CONFIG_CONTEXT, probe))) {
      throw new IllegalArgumentException("signing key: its public key is not the private key's (expected: one pair)");
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

  /** The signature of an Unassign request with these fields, sent to {@code pod}. */
  public ByteString signUnassign(String clusterId, long term, long newEpoch, PodId pod, List<Integer> shards,
      List<PodId> targets, long terminationMillis) {
    return ByteString.copyFrom(sign(UNASSIGN_CONTEXT,
        unassignPayload(clusterId, term, newEpoch, pod, shards, targets, terminationMillis)));
  }

  /**
   * What an Unassign signature covers (context {@code atoll-unassign-v2}): the cluster, the
   * manager's term, the new epoch, the receiving pod (so a request for one pod means nothing to
   * another), the shards, where each goes, and how long the pod may take to stop its entities.
   */
  public static byte[] unassignPayload(String clusterId, long term, long newEpoch, PodId pod, List<Integer> shards,
      List<PodId> targets, long terminationMillis) {
    try {
      ByteArrayOutputStream bytes = new ByteArrayOutputStream();
      DataOutputStream out = new DataOutputStream(bytes);
      out.writeUTF(clusterId);
      out.writeLong(term);
      out.writeLong(newEpoch);
      writePod(out, pod);
      out.writeLong(terminationMillis);
      out.writeInt(shards.size());
      for (int s : shards) {
        out.writeInt(s);
      }
      out.writeInt(targets.size());
      for (PodId t : targets) {
        writePod(out, t);
      }
      out.flush();
      return bytes.toByteArray();
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  private static void writePod(DataOutputStream out, PodId pod) throws IOException {
    out.writeUTF(pod.address().host());
    out.writeInt(pod.address().port());
    out.writeLong(pod.incarnation());
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

  /**
   * The key the Atoll KV nodes of cluster {@code clusterId} prove themselves to each other with
   * (see {@code RegisterResponse.kv_node_key}): a MAC, under the credential key, of a context no
   * credential starts with, so that only a holder of this manager's key computes it, and it tells
   * nothing of any credential.
   */
  public ByteString kvNodeKey(String clusterId) {
    try {
      Mac mac = Mac.getInstance("HmacSHA256");
      mac.init(credentialKey);
      mac.update(("atoll-kv-node-key-v1\0" + clusterId).getBytes(StandardCharsets.UTF_8));
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
