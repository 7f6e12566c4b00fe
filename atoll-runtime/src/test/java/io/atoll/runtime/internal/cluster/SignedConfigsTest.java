package io.atoll.runtime.internal.cluster;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.atoll.core.ClusterConfig;
import io.atoll.transport.grpc.security.ConfigSigner;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import org.junit.jupiter.api.Test;

/** The gate of configs from the manager: key changes, and what the pod gossips on after one. */
class SignedConfigsTest {

  final ConfigSigner oldKey = ConfigSigner.generate();
  final ConfigSigner newKey = ConfigSigner.generate();
  final ClusterConfig config = ClusterConfig.empty(4);

  @Test
  void aKeyChangeReplacesTheGossipedConfigEvenAtTheSameEpoch() {
    SignedConfigs configs = new SignedConfigs();
    configs.fromManager(oldKey.bytes(config));
    configs.fromManager(newKey.bytes(config), true);
    // Before: the old key's config stayed the one gossiped, which peers on the new key refuse.
    assertThat(configs.newest().getSignerKey()).isEqualTo(newKey.publicKey());
  }

  @Test
  void aStreamThatMayNotChangeTheKeyIsRefusedAndChangesNothing() {
    SignedConfigs configs = new SignedConfigs();
    configs.fromManager(newKey.bytes(config), true);
    // A deposed manager, still answering on an old stream, with its old key.
    assertThatThrownBy(() -> configs.fromManager(oldKey.bytes(config), false))
        .isInstanceOfSatisfying(StatusRuntimeException.class, e -> assertThat(e.getStatus().getCode())
            .isEqualTo(Status.Code.FAILED_PRECONDITION))
        .hasMessageContaining("signed with another key");
    assertThat(configs.newest().getSignerKey()).isEqualTo(newKey.publicKey());
    // the trusted key is still the new one: the same key on that stream is fine
    assertThat(configs.fromManager(newKey.bytes(config), false)).isEqualTo(config);
  }
}
