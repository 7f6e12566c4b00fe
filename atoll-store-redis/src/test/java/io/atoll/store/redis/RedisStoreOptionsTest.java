package io.atoll.store.redis;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.file.Path;
import java.time.Duration;
import org.junit.jupiter.api.Test;

class RedisStoreOptionsTest {

  @Test
  void aPlainUriTakesTheDefaults() {
    RedisStoreOptions o = RedisStoreOptions.parse("redis://127.0.0.1");
    assertThat(o).isEqualTo(new RedisStoreOptions("127.0.0.1", 6379, false, null, null, 0, "atoll",
        Duration.ofSeconds(5), null));
  }

  @Test
  void everyPartIsRead() {
    RedisStoreOptions o = RedisStoreOptions.parse(
        "rediss://ops:p%40ss%3Aw0rd@redis.internal:6380/3?prefix=prod-1&timeout=250ms&cacert=/etc/ca.pem");
    assertThat(o).isEqualTo(new RedisStoreOptions("redis.internal", 6380, true, "ops", "p@ss:w0rd", 3, "prod-1",
        Duration.ofMillis(250), Path.of("/etc/ca.pem")));
    assertThat(o.describe()).isEqualTo("rediss://ops@redis.internal:6380/3 (prefix prod-1)").doesNotContain("w0rd");
  }

  @Test
  void aPasswordAloneIsThePasswordOfTheDefaultUser() {
    assertThat(RedisStoreOptions.parse("redis://:secret@h:1").password()).isEqualTo("secret");
    assertThat(RedisStoreOptions.parse("redis://:secret@h:1").user()).isNull();
    assertThat(RedisStoreOptions.parse("redis://secret@h:1").password()).isEqualTo("secret");
  }

  @Test
  void badUrisAreRefusedSayingWhatIsWrong() {
    assertThatThrownBy(() -> RedisStoreOptions.parse("")).hasMessageContaining("empty URI");
    assertThatThrownBy(() -> RedisStoreOptions.parse("http://h:1")).hasMessageContaining("scheme 'http'")
        .hasMessageContaining("expected: redis://");
    assertThatThrownBy(() -> RedisStoreOptions.parse("redis://h:1/x")).hasMessageContaining("database 'x'");
    assertThatThrownBy(() -> RedisStoreOptions.parse("redis://h:1?colour=red"))
        .hasMessageContaining("unknown parameter 'colour'");
    assertThatThrownBy(() -> RedisStoreOptions.parse("redis://h:1?timeout=soon")).hasMessageContaining("timeout 'soon'");
    assertThatThrownBy(() -> RedisStoreOptions.parse("redis://h:1?prefix=a%20b")).hasMessageContaining("prefix 'a b'");
    assertThatThrownBy(() -> RedisStoreOptions.parse("redis://h:1?cacert=/ca.pem"))
        .hasMessageContaining("without TLS");
    assertThatThrownBy(() -> RedisStoreOptions.parse("redis://:1")).hasMessageContaining("no host");
    assertThatThrownBy(() -> RedisStoreOptions.parse("redis://h:1 2")).hasMessageContaining("not a URI");
    assertThatThrownBy(() -> RedisStoreOptions.parse("redis://h:70000")).isInstanceOf(IllegalArgumentException.class);
  }
}
