package io.atoll.store.redis;

import io.lettuce.core.ClientOptions;
import io.lettuce.core.RedisClient;
import io.lettuce.core.RedisURI;
import io.lettuce.core.SslOptions;
import io.lettuce.core.TimeoutOptions;

/** The Lettuce client both Redis stores use: credentials, TLS, timeouts and reconnecting from the options. */
final class RedisClients {

  private RedisClients() {}

  /**
   * A client for {@code options}, not yet connected: it reconnects by itself, and while it is
   * disconnected commands fail at once rather than queue; every command times out after the
   * options' timeout.
   */
  static RedisClient create(RedisStoreOptions options) {
    RedisURI.Builder b = RedisURI.builder().withHost(options.host()).withPort(options.port())
        .withSsl(options.tls()).withDatabase(options.database()).withTimeout(options.timeout());
    if (options.password() != null) {
      if (options.user() != null) {
        b.withAuthentication(options.user(), options.password());
      } else {
        b.withPassword(options.password().toCharArray());
      }
    }
    RedisClient client = RedisClient.create(b.build());
    ClientOptions.Builder co = ClientOptions.builder().autoReconnect(true)
        .disconnectedBehavior(ClientOptions.DisconnectedBehavior.REJECT_COMMANDS)
        .timeoutOptions(TimeoutOptions.enabled(options.timeout()));
    if (options.caCert() != null) {
      co.sslOptions(SslOptions.builder().jdkSslProvider().trustManager(options.caCert().toFile()).build());
    }
    client.setOptions(co.build());
    return client;
  }
}
