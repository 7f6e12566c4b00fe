package io.atoll.testkit.junit;

import java.lang.annotation.Documented;
import java.lang.annotation.ElementType;
import java.lang.annotation.Inherited;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * Runs each test with a fresh {@link io.atoll.testkit.LocalCluster}: a shard manager and
 * {@link #pods()} pods on loopback, started before the test (and settled: every shard owned and
 * served) and closed after it. The test gets it as a parameter:
 *
 * <pre>{@code
 * @AtollCluster(shards = 30, pods = 2, podTemplate = CounterPods.class)
 * class CounterTest {
 *   @Test
 *   void counts(LocalCluster cluster) throws Exception {
 *     Sharding pod = cluster.pods().get(0);
 *     ...
 *   }
 * }
 * }</pre>
 *
 * On a method it overrides the class's. For settings an annotation cannot carry, register an
 * {@link AtollClusterExtension} built in code instead (not both).
 */
@Documented
@Inherited
@Retention(RetentionPolicy.RUNTIME)
@Target({ElementType.TYPE, ElementType.METHOD})
@ExtendWith(AtollClusterExtension.class)
public @interface AtollCluster {

  /** The number of shards. */
  int shards() default 30;

  /** Pods started before the test. */
  int pods() default 0;

  /** What each pod's builder gets (entity types); needs a public no-argument constructor. */
  Class<? extends PodTemplate> podTemplate() default PodTemplate.None.class;
}
