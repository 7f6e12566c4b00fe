package io.atoll.store.etcd;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.Test;

class EtcdStoreOptionsTest {

  @Test
  void aPlainUriTakesTheDefaults() {
    EtcdStoreOptions o = EtcdStoreOptions.parse("etcd://127.0.0.1:2379");
    assertThat(o).isEqualTo(new EtcdStoreOptions(List.of("127.0.0.1:2379"), false, null, null, "atoll",
        Duration.ofSeconds(5), 1_500_000, null));
    assertThat(o.targets()).containsExactly("http://127.0.0.1:2379");
  }

  @Test
  void everyPartIsRead() {
    EtcdStoreOptions o = EtcdStoreOptions.parse(
        "etcds://root:p%40ss@e1:2379,e2:2380,e3/prod?timeout=2s&max-bytes=8000000&cacert=/etc/ca.pem");
    assertThat(o).isEqualTo(new EtcdStoreOptions(List.of("e1:2379", "e2:2380", "e3:2379"), true, "root", "p@ss",
        "prod", Duration.ofSeconds(2), 8_000_000, Path.of("/etc/ca.pem")));
    assertThat(o.targets()).containsExactly("https://e1:2379", "https://e2:2380", "https://e3:2379");
    assertThat(o.describe()).isEqualTo("etcds://root@e1:2379,e2:2380,e3:2379/prod").doesNotContain("p@ss");
  }

  @Test
  void badUrisAreRefusedSayingWhatIsWrongWithoutThePassword() {
    assertThatThrownBy(() -> EtcdStoreOptions.parse(" ")).hasMessageContaining("empty URI");
    assertThatThrownBy(() -> EtcdStoreOptions.parse("http://h:1")).hasMessageContaining("no etcd:// or etcds://");
    assertThatThrownBy(() -> EtcdStoreOptions.parse("etcd://h:1,,h:2")).hasMessageContaining("empty endpoint");
    assertThatThrownBy(() -> EtcdStoreOptions.parse("etcd://h:x")).hasMessageContaining("port 'x'");
    assertThatThrownBy(() -> EtcdStoreOptions.parse("etcd://h:0")).hasMessageContaining("port 0");
    assertThatThrownBy(() -> EtcdStoreOptions.parse("etcd://h h:1")).hasMessageContaining("host 'h h'");
    assertThatThrownBy(() -> EtcdStoreOptions.parse("etcd://secret@h:1")).hasMessageContaining("user:password")
        .hasMessageNotContaining("secret");
    assertThatThrownBy(() -> EtcdStoreOptions.parse("etcd://u:secret@h:1?x=1"))
        .hasMessageContaining("unknown parameter 'x'").hasMessageNotContaining("secret");
    assertThatThrownBy(() -> EtcdStoreOptions.parse("etcd://h:1?max-bytes=lots")).hasMessageContaining("max-bytes");
    assertThatThrownBy(() -> EtcdStoreOptions.parse("etcd://h:1?timeout=0s")).hasMessageContaining("timeout");
    assertThatThrownBy(() -> EtcdStoreOptions.parse("etcd://h:1/a%b")).hasMessageContaining("prefix 'a%b'");
    assertThatThrownBy(() -> EtcdStoreOptions.parse("etcd://h:1?cacert=/ca")).hasMessageContaining("without TLS");
  }
}
