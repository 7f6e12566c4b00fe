package io.atoll.kv.internal.command;

import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.concurrent.atomic.LongAdder;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Redis' {@code requirepass} without ACLs: one user, {@code default}, with one password or none.
 * Without a password every connection starts authenticated and {@code AUTH default <anything>}
 * succeeds, as Redis' {@code nopass} default user; with one, a connection runs only AUTH, HELLO
 * and QUIT until it has given it. Passwords are compared as SHA-256 digests in constant time. A
 * connection that fails {@link #MAX_FAILURES} times is closed. Thread-safe.
 */
public final class Auth {
  private static final Logger LOG = LoggerFactory.getLogger(Auth.class);
  /** Redis' reply to any command but AUTH, HELLO and QUIT before authenticating. */
  public static final String NOAUTH = "NOAUTH Authentication required.";
  /** Redis' reply to a bare HELLO before authenticating. */
  static final String NOAUTH_HELLO = "NOAUTH HELLO must be called with the client already authenticated, otherwise"
      + " the HELLO <proto> AUTH <user> <pass> option can be used to authenticate the client and select the RESP"
      + " protocol version at the same time";
  /** Redis' reply to a wrong user or password (one text for both: it does not tell which names exist). */
  static final String WRONGPASS = "WRONGPASS invalid username-password pair or user is disabled.";
  /** Redis' reply to {@code AUTH <password>} when no password is set. */
  static final String NO_PASSWORD = "ERR AUTH <password> called without any password configured for the default"
      + " user. Are you sure your configuration is correct?";
  /** Failed AUTH or HELLO AUTH attempts after which a connection is closed. */
  public static final int MAX_FAILURES = 10;

  /** No password: every connection is authenticated. */
  public static final Auth NONE = new Auth(null);

  private final byte[] digest;
  private final LongAdder denied = new LongAdder();

  private Auth(byte[] digest) {
    this.digest = digest;
  }

  /**
   * The default user's password, or {@link #NONE} for null.
   *
   * @throws IllegalArgumentException if it is empty
   */
  public static Auth password(String password) {
    if (password == null) {
      return NONE;
    }
    if (password.isEmpty()) {
      throw new IllegalArgumentException("requirepass: empty (expected: a password, or none at all)");
    }
    return new Auth(sha256(password.getBytes(StandardCharsets.UTF_8)));
  }

  /** Whether a password is set. */
  public boolean required() {
    return digest != null;
  }

  /** Refused attempts since start (INFO's {@code acl_access_denied_auth}). */
  long denied() {
    return denied.sum();
  }

  /**
   * Checks {@code user} and {@code password} and records the outcome in {@code session}.
   *
   * @throws CommandError Redis' WRONGPASS if they do not match; the session is closed after the
   *     reply if it has failed {@link #MAX_FAILURES} times
   */
  void authenticate(Session session, String user, byte[] password) {
    boolean ok = user.equals("default") && (digest == null || MessageDigest.isEqual(digest, sha256(password)));
    if (ok) {
      session.authenticated = true;
      return;
    }
    denied.increment();
    if (++session.authFailures >= MAX_FAILURES) {
      session.closeAfterReply = true;
      LOG.warn("client {} closed after {} failed AUTH attempts (expected: the default user's password)",
          session.id(), session.authFailures);
    }
    throw new CommandError(WRONGPASS);
  }

  private static byte[] sha256(byte[] b) {
    try {
      return MessageDigest.getInstance("SHA-256").digest(b);
    } catch (NoSuchAlgorithmException e) {
      throw new IllegalStateException("SHA-256 is required by every JDK", e);
    }
  }
}
