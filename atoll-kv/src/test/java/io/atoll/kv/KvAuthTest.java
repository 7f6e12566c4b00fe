package io.atoll.kv;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.lettuce.core.RedisClient;
import io.lettuce.core.RedisCommandExecutionException;
import io.lettuce.core.RedisConnectionException;
import io.lettuce.core.RedisURI;
import io.lettuce.core.api.StatefulRedisConnection;
import java.nio.file.Path;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.io.TempDir;
import redis.clients.jedis.DefaultJedisClientConfig;
import redis.clients.jedis.HostAndPort;
import redis.clients.jedis.Jedis;
import redis.clients.jedis.exceptions.JedisDataException;

/**
 * A node with a password (Redis' requirepass): Redis' exact refusals on the wire before AUTH, AUTH
 * and HELLO AUTH in both forms, the caps on a client that has not authenticated, the connection
 * closed after too many wrong passwords; and the real redis-cli ({@code -a}), Lettuce and Jedis
 * with and without the password.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class KvAuthTest {
  private static final String PASSWORD = "s3cret-Pa55";

  @TempDir
  static Path dataDir;

  private KvServer server;

  @BeforeAll
  void start() throws Exception {
    server = KvServer.start(KvSettings.defaults(0, dataDir).withPassword(PASSWORD));
    try (Wire w = new Wire(server.port())) {
      w.call("AUTH", PASSWORD);
      assertThat(w.call("CLUSTER", "ADDSLOTSRANGE", "0", "16383")).isEqualTo("+OK\r\n");
    }
  }

  @AfterAll
  void stop() {
    server.close();
  }

  @Test
  void beforeAuthOnlyAuthHelloAndQuitRunWithRedisExactWords() throws Exception {
    try (Wire w = new Wire(server.port())) {
      assertThat(w.call("PING")).isEqualTo("-NOAUTH Authentication required.\r\n");
      assertThat(w.call("GET", "k")).isEqualTo("-NOAUTH Authentication required.\r\n");
      assertThat(w.call("CLUSTER", "SLOTS")).isEqualTo("-NOAUTH Authentication required.\r\n");
      // The hand-offs' node proof too: a node proves itself after AUTH, as every client.
      assertThat(w.call("CLUSTER", "ATOLL-NODE")).isEqualTo("-NOAUTH Authentication required.\r\n");
      assertThat(w.call("CLUSTER", "ATOLL-NODE", "00")).isEqualTo("-NOAUTH Authentication required.\r\n");
      assertThat(w.call("COMMAND")).isEqualTo("-NOAUTH Authentication required.\r\n");
      // Unknown commands and wrong arities are named first, as Redis orders its checks.
      assertThat(w.call("NOSUCH")).startsWith("-ERR unknown command 'NOSUCH'");
      assertThat(w.call("HELLO", "3")).isEqualTo("-NOAUTH HELLO must be called with the client already authenticated,"
          + " otherwise the HELLO <proto> AUTH <user> <pass> option can be used to authenticate the client and select"
          + " the RESP protocol version at the same time\r\n");
      assertThat(w.call("AUTH", "wrong")).isEqualTo("-WRONGPASS invalid username-password pair or user is disabled.\r\n");
      assertThat(w.call("AUTH", "bob", PASSWORD))
          .isEqualTo("-WRONGPASS invalid username-password pair or user is disabled.\r\n");
      assertThat(w.call("HELLO", "3", "AUTH", "default", "nope"))
          .isEqualTo("-WRONGPASS invalid username-password pair or user is disabled.\r\n");
      assertThat(w.call("AUTH", "a", "b", "c")).isEqualTo("-ERR syntax error\r\n");
      // A HELLO that fails applies none of its options (Redis authenticates first).
      assertThat(w.call("HELLO", "3", "SETNAME", "early")).startsWith("-NOAUTH HELLO must be called");
      assertThat(w.call("HELLO", "3", "SETNAME", "early", "AUTH", "default", "nope")).startsWith("-WRONGPASS");
      assertThat(w.call("PING")).isEqualTo("-NOAUTH Authentication required.\r\n");
      assertThat(w.call("AUTH", PASSWORD)).isEqualTo("+OK\r\n");
      assertThat(w.call("CLIENT", "GETNAME")).as("no name from the HELLOs that failed").isEqualTo("$-1\r\n");
      assertThat(w.call("SET", "k", "v")).isEqualTo("+OK\r\n");
      assertThat(w.call("GET", "k")).isEqualTo("$1\r\nv\r\n");
      assertThat(w.call("QUIT")).isEqualTo("+OK\r\n");
    }
    try (Wire w = new Wire(server.port())) {
      assertThat(w.call("AUTH", "default", PASSWORD)).isEqualTo("+OK\r\n");
      assertThat(w.call("GET", "k")).isEqualTo("$1\r\nv\r\n");
    }
    try (Wire w = new Wire(server.port())) {
      assertThat(w.call("HELLO", "3", "AUTH", "default", PASSWORD, "SETNAME", "app")).startsWith("%7\r\n");
      assertThat(w.call("CLIENT", "GETNAME")).isEqualTo("$3\r\napp\r\n");
    }
    try (Wire w = new Wire(server.port())) {
      assertThat(w.call("QUIT")).isEqualTo("+OK\r\n");
      assertThat(w.closedByServer()).isTrue();
    }
  }

  @Test
  void aClientThatHasNotAuthenticatedCannotMakeTheNodeBufferMuch() throws Exception {
    try (Wire w = new Wire(server.port())) {
      String[] eleven = new String[11];
      java.util.Arrays.fill(eleven, "x");
      assertThat(w.call(eleven)).isEqualTo("-ERR Protocol error: unauthenticated multibulk length\r\n");
      assertThat(w.closedByServer()).isTrue();
    }
    try (Wire w = new Wire(server.port())) {
      assertThat(w.raw("*2\r\n$3\r\nSET\r\n$100000\r\n").reply())
          .isEqualTo("-ERR Protocol error: unauthenticated bulk length\r\n");
      assertThat(w.closedByServer()).isTrue();
    }
    try (Wire w = new Wire(server.port())) { // after AUTH, the full limits
      assertThat(w.call("AUTH", PASSWORD)).isEqualTo("+OK\r\n");
      assertThat(w.call("SET", "big", "x".repeat(100_000))).isEqualTo("+OK\r\n");
      assertThat(w.call("STRLEN", "big")).isEqualTo(":100000\r\n");
    }
  }

  @Test
  void tooManyWrongPasswordsCloseTheConnection() throws Exception {
    try (Wire w = new Wire(server.port())) {
      for (int i = 1; i < 10; i++) {
        assertThat(w.call("AUTH", "guess-" + i)).startsWith("-WRONGPASS");
      }
      assertThat(w.call("HELLO", "2", "AUTH", "default", "guess-10")).startsWith("-WRONGPASS");
      assertThat(w.closedByServer()).as("closed after the 10th wrong password").isTrue();
    }
    try (Wire w = new Wire(server.port())) { // a new connection may try again, and INFO counts the refusals
      assertThat(w.call("AUTH", PASSWORD)).isEqualTo("+OK\r\n");
      assertThat(w.call("INFO", "stats")).containsPattern("acl_access_denied_auth:([1-9][0-9]+)");
    }
  }

  @Test
  void redisCliWithAndWithoutThePassword() throws Exception {
    RedisCli.assume();
    String port = Integer.toString(server.port());
    assertThat(RedisCli.run(null, "-p", port, "SET", "cli", "1")).contains("NOAUTH Authentication required.");
    assertThat(RedisCli.run(null, "-p", port, "-a", "nope", "--no-auth-warning", "PING"))
        .contains("WRONGPASS invalid username-password pair or user is disabled.");
    assertThat(RedisCli.run(null, "-p", port, "-a", PASSWORD, "--no-auth-warning", "SET", "cli", "1")).contains("OK");
    assertThat(RedisCli.run(null, "-p", port, "--user", "default", "--pass", PASSWORD, "--no-auth-warning", "GET",
        "cli")).contains("1");
    assertThat(RedisCli.run(null, "-3", "-p", port, "-a", PASSWORD, "--no-auth-warning", "INCR", "cli"))
        .contains("2");
  }

  @Test
  void lettuceAndJedisWithAndWithoutThePassword() {
    RedisClient lettuce = RedisClient.create();
    try {
      RedisURI good = RedisURI.builder().withHost("127.0.0.1").withPort(server.port()).withPassword(PASSWORD.toCharArray())
          .build();
      try (StatefulRedisConnection<String, String> c = lettuce.connect(good)) { // HELLO 3 AUTH default ...
        c.sync().set("lettuce", "yes");
        assertThat(c.sync().get("lettuce")).isEqualTo("yes");
      }
      RedisURI none = RedisURI.create("redis://127.0.0.1:" + server.port());
      assertThatThrownBy(() -> {
        try (StatefulRedisConnection<String, String> c = lettuce.connect(none)) {
          c.sync().get("lettuce");
        }
      }).isInstanceOfAny(RedisConnectionException.class, RedisCommandExecutionException.class)
          .satisfies(e -> assertThat(messages(e)).containsAnyOf("NOAUTH", "RedisHandshakeHandler not registered"));
      RedisURI wrong = RedisURI.builder().withHost("127.0.0.1").withPort(server.port())
          .withAuthentication("default", "nope".toCharArray()).build();
      // Refused (and above: refused without a password). Lettuce's exception carries the server's WRONGPASS, except when that reply is
      // handled before Lettuce's own connect listener runs (a loaded machine): its handshake handler
      // is gone by then and it reports "RedisHandshakeHandler not registered" instead. So the words
      // themselves are checked with Jedis and redis-cli, which have no such race.
      assertThatThrownBy(() -> lettuce.connect(wrong).close()).isInstanceOf(RedisConnectionException.class)
          .satisfies(e -> assertThat(messages(e)).containsAnyOf("WRONGPASS", "RedisHandshakeHandler not registered"));
    } finally {
      lettuce.shutdown();
    }
    HostAndPort at = new HostAndPort("127.0.0.1", server.port());
    try (Jedis j = new Jedis(at, DefaultJedisClientConfig.builder().password(PASSWORD).build())) {
      assertThat(j.get("lettuce")).isEqualTo("yes");
    }
    try (Jedis j = new Jedis(at, DefaultJedisClientConfig.builder().build())) {
      assertThatThrownBy(() -> j.get("lettuce")).isInstanceOf(JedisDataException.class).hasMessageContaining("NOAUTH");
    }
    assertThatThrownBy(() -> {
      try (Jedis j = new Jedis(at, DefaultJedisClientConfig.builder().user("default").password("nope").build())) {
        j.ping();
      }
    }).satisfies(e -> assertThat(messages(e)).contains("WRONGPASS"));
  }

  private static String messages(Throwable e) {
    StringBuilder sb = new StringBuilder();
    for (Throwable t = e; t != null; t = t.getCause()) {
      sb.append(t.getMessage()).append(" | ");
    }
    return sb.toString();
  }
}
