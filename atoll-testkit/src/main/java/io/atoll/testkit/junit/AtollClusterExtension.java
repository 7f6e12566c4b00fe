package io.atoll.testkit.junit;

import io.atoll.core.Ticker;
import io.atoll.manager.ManagerSettings;
import io.atoll.runtime.Sharding;
import io.atoll.testkit.LocalCluster;
import java.lang.reflect.AnnotatedElement;
import java.time.Duration;
import java.util.Objects;
import java.util.Optional;
import java.util.function.UnaryOperator;
import org.junit.jupiter.api.extension.AfterEachCallback;
import org.junit.jupiter.api.extension.BeforeEachCallback;
import org.junit.jupiter.api.extension.ExtensionConfigurationException;
import org.junit.jupiter.api.extension.ExtensionContext;
import org.junit.jupiter.api.extension.ParameterContext;
import org.junit.jupiter.api.extension.ParameterResolver;
import org.junit.platform.commons.support.AnnotationSupport;

/**
 * The JUnit 5 extension behind {@link AtollCluster}: a fresh {@link LocalCluster} for each test,
 * started before it and closed after it, and resolved as a {@link LocalCluster} parameter. Built
 * in code, it takes what an annotation cannot carry:
 *
 * <pre>{@code
 * @RegisterExtension
 * final AtollClusterExtension atoll = AtollClusterExtension.builder()
 *     .settings(LocalCluster.fastSettings(60))
 *     .podTemplate(b -> b.register(COUNTER, ctx -> new Counter()))
 *     .pods(2)
 *     .build();
 *
 * @Test
 * void counts() {
 *   LocalCluster cluster = atoll.cluster();
 *   ...
 * }
 * }</pre>
 *
 * Tests of one class run one at a time with it (each has its own cluster; the extension keeps
 * the current one for {@link #cluster()}).
 */
public final class AtollClusterExtension implements BeforeEachCallback, AfterEachCallback, ParameterResolver {

  private static final ExtensionContext.Namespace NS = ExtensionContext.Namespace.create(AtollClusterExtension.class);
  private static final Duration SETTLE = Duration.ofSeconds(30);

  private final Builder config;
  private volatile LocalCluster current;

  /** The extension as {@link AtollCluster} registers it: configured by the annotation. */
  public AtollClusterExtension() {
    this.config = null;
  }

  private AtollClusterExtension(Builder config) {
    this.config = config;
  }

  /** A builder: 30 shards with {@link LocalCluster#fastSettings} timings, no pods, no template. */
  public static Builder builder() {
    return new Builder();
  }

  /**
   * The cluster of the test that is running.
   *
   * @throws IllegalStateException outside a test
   */
  public LocalCluster cluster() {
    LocalCluster c = current;
    if (c == null) {
      throw new IllegalStateException("no test is running (expected: call from a test or @BeforeEach/@AfterEach)");
    }
    return c;
  }

  @Override
  public void beforeEach(ExtensionContext context) throws Exception {
    Builder b = config != null ? config : fromAnnotation(context);
    LocalCluster.Builder cb = LocalCluster.builder().podTemplate(b.template).ticker(b.ticker);
    cb = b.settings != null ? cb.settings(b.settings) : cb.shards(b.shards);
    LocalCluster cluster = cb.start();
    context.getStore(NS).put(LocalCluster.class, cluster);
    current = cluster;
    try {
      for (int i = 0; i < b.pods; i++) {
        cluster.addPod();
      }
      if (b.pods > 0) {
        cluster.awaitSettled(SETTLE);
      }
    } catch (RuntimeException e) {
      cluster.close();
      throw e;
    }
  }

  @Override
  public void afterEach(ExtensionContext context) {
    LocalCluster cluster = context.getStore(NS).remove(LocalCluster.class, LocalCluster.class);
    current = null;
    if (cluster != null) {
      cluster.close();
    }
  }

  @Override
  public boolean supportsParameter(ParameterContext parameter, ExtensionContext context) {
    return parameter.getParameter().getType() == LocalCluster.class;
  }

  @Override
  public Object resolveParameter(ParameterContext parameter, ExtensionContext context) {
    LocalCluster c = context.getStore(NS).get(LocalCluster.class, LocalCluster.class);
    if (c == null) {
      throw new ExtensionConfigurationException("an Atoll cluster is made for each test; "
          + parameter.getDeclaringExecutable() + " is not a test or @BeforeEach/@AfterEach method");
    }
    return c;
  }

  private static Builder fromAnnotation(ExtensionContext context) {
    AtollCluster a = find(context.getTestMethod())
        .or(() -> context.getTestClass().flatMap(AtollClusterExtension::findOnClass))
        .orElseThrow(() -> new ExtensionConfigurationException(
            "AtollClusterExtension registered without @AtollCluster (expected: the annotation, or builder())"));
    PodTemplate template;
    try {
      template = a.podTemplate().getConstructor().newInstance();
    } catch (ReflectiveOperationException e) {
      throw new ExtensionConfigurationException("pod template " + a.podTemplate().getName()
          + " cannot be made (expected: a public class with a public no-argument constructor)", e);
    }
    return builder().shards(a.shards()).pods(a.pods()).podTemplate(template);
  }

  private static Optional<AtollCluster> find(Optional<? extends AnnotatedElement> element) {
    return element.flatMap(e -> AnnotationSupport.findAnnotation(e, AtollCluster.class));
  }

  private static Optional<AtollCluster> findOnClass(Class<?> c) {
    for (Class<?> k = c; k != null; k = k.getEnclosingClass()) {
      Optional<AtollCluster> a = AnnotationSupport.findAnnotation(k, AtollCluster.class);
      if (a.isPresent()) {
        return a;
      }
    }
    return Optional.empty();
  }

  /** Builds an {@link AtollClusterExtension}. Not thread-safe. */
  public static final class Builder {
    private int shards = 30;
    private int pods;
    private ManagerSettings settings;
    private UnaryOperator<Sharding.Builder> template = UnaryOperator.identity();
    private Ticker ticker = Ticker.SYSTEM;

    private Builder() {}

    /** The number of shards, with test timings. @throws IllegalArgumentException unless >= 1 */
    public Builder shards(int n) {
      if (n < 1 || n > ManagerSettings.MAX_SHARDS) {
        throw new IllegalArgumentException("shards: " + n + " (expected: 1.." + ManagerSettings.MAX_SHARDS + ")");
      }
      this.shards = n;
      return this;
    }

    /** The manager's settings, replacing {@link #shards}. */
    public Builder settings(ManagerSettings s) {
      this.settings = Objects.requireNonNull(s, "settings");
      return this;
    }

    /** Pods started (and settled) before each test. @throws IllegalArgumentException unless 0..16 */
    public Builder pods(int n) {
      if (n < 0 || n > 16) {
        throw new IllegalArgumentException("pods: " + n + " (expected: 0..16)");
      }
      this.pods = n;
      return this;
    }

    /** What every pod's builder gets first (entity types). */
    public Builder podTemplate(UnaryOperator<Sharding.Builder> t) {
      this.template = Objects.requireNonNull(t, "template");
      return this;
    }

    /**
     * The clock every member of every test's cluster reads, e.g. a
     * {@link io.atoll.testkit.VirtualTicker} the test advances. Default: the system clock.
     */
    public Builder ticker(Ticker t) {
      this.ticker = Objects.requireNonNull(t, "ticker");
      return this;
    }

    /** The extension. */
    public AtollClusterExtension build() {
      return new AtollClusterExtension(this);
    }
  }
}
