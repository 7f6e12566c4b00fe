package io.atoll.core;

import java.util.List;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.Provide;

/**
 * Every merge law and encoding property of {@link ClusterConfigProperties}, over configs whose pods
 * may have TLS client ports (format 4 when one has), with roles and without.
 */
class TlsPortConfigProperties extends ClusterConfigProperties {

  @Override
  @Provide
  Arbitrary<ClusterConfig> configs() {
    return Configs.configs(Spaces.single(12), Configs.ROLES, List.of(0, 0, 8001, 9001));
  }
}
