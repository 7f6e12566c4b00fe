package io.atoll.runtime.internal;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.atoll.core.HasherFingerprint;
import io.atoll.core.ShardHasher;
import org.junit.jupiter.api.Test;

/** A pod's fingerprint of a hosted type's hasher, computed at its start. */
class PodRuntimeFingerprintTest {

  @Test
  void aHasherThatOverflowsTheStackFailsTheStartNamingTheType() {
    ShardHasher recurses = new ShardHasher() {
      @Override
      public int shardOf(String id, int n) {
        return shardOf(id, n);
      }
    };
    assertThatThrownBy(() -> PodRuntime.fingerprint("job", recurses)).isInstanceOf(IllegalArgumentException.class)
        .hasMessageStartingWith("entity type 'job': its hasher io.atoll.runtime.internal.PodRuntimeFingerprintTest$")
        .hasMessageContaining("overflowed the stack");
    assertThat(PodRuntime.fingerprint("job", ShardHasher.DEFAULT)).isEqualTo(HasherFingerprint.of(ShardHasher.DEFAULT));
  }
}
