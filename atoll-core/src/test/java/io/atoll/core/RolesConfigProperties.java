package io.atoll.core;

import net.jqwik.api.Arbitrary;
import net.jqwik.api.Provide;

/**
 * Every merge law and encoding property of {@link ClusterConfigProperties}, over configs of one
 * default space whose pods host roles (format 3 for the roles alone).
 */
class RolesConfigProperties extends ClusterConfigProperties {

  @Override
  @Provide
  Arbitrary<ClusterConfig> configs() {
    return Configs.configs(Spaces.single(12), Configs.ROLES);
  }
}
