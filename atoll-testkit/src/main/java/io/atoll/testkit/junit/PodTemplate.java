package io.atoll.testkit.junit;

import io.atoll.runtime.Sharding;
import java.util.function.UnaryOperator;

/**
 * What every pod of an {@link AtollCluster}-annotated test gets on its builder, typically its
 * entity types. Named by class in the annotation, so it needs a public no-argument constructor.
 */
public interface PodTemplate extends UnaryOperator<Sharding.Builder> {

  /** The template that changes nothing. */
  final class None implements PodTemplate {
    /** Creates it. */
    public None() {}

    @Override
    public Sharding.Builder apply(Sharding.Builder b) {
      return b;
    }
  }
}
