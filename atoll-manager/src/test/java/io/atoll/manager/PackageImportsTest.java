package io.atoll.manager;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.PrintWriter;
import java.io.StringWriter;
import java.net.URISyntaxException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.spi.ToolProvider;
import org.junit.jupiter.api.Test;

/**
 * Imports run one way between the manager's packages, as {@code jdeps -verbose:package} reads them
 * from the compiled classes. The packages stand in layers, and a package names only packages in
 * layers below its own:
 *
 * <ol>
 *   <li>{@code round} (the pure decisions) and {@code pods} (the calls to pods), which name
 *       nothing of the manager and not each other;
 *   <li>{@code io.atoll.manager}, the loop and its rooms, over both;
 *   <li>{@code metrics}, a binder over the manager's public observer, which the manager never names.
 * </ol>
 *
 * A new package fails the check until it is given its layer here.
 */
class PackageImportsTest {

  static final String ROOT = "io.atoll.manager";
  static final List<Set<String>> LAYERS = List.of(
      Set.of(ROOT + ".round", ROOT + ".pods"),
      Set.of(ROOT),
      Set.of(ROOT + ".metrics"));

  private static final Pattern EDGE = Pattern.compile("^\\s*(\\S+)\\s+->\\s+(\\S+)\\s");

  @Test
  void theManagersPackagesNameOnlyLayersBelowTheirOwn() {
    Map<String, Set<String>> graph = packageGraph();
    assertThat(graph).as("the graph jdeps read").containsKeys(ROOT, ROOT + ".round", ROOT + ".metrics");
    assertThat(graph.get(ROOT)).as("the loop's imports").contains(ROOT + ".round", ROOT + ".pods");
    assertThat(wrongEdges(graph, LAYERS)).isEmpty();
  }

  @Test
  void theCheckRefusesAnEdgeUpwardsSidewaysOrFromAPackageWithoutALayer() {
    Map<String, Set<String>> g = new TreeMap<>();
    g.put("a", Set.of("b"));
    g.put("b", Set.of("c"));
    g.put("c", Set.of());
    List<Set<String>> layers = List.of(Set.of("c", "d"), Set.of("b"), Set.of("a"));
    assertThat(wrongEdges(g, layers)).isEmpty();
    g.put("c", Set.of("b"));
    g.put("d", Set.of("c"));
    g.put("e", Set.of());
    assertThat(wrongEdges(g, layers)).containsExactly("c -> b (layer 0 names layer 1)",
        "d -> c (layer 0 names layer 0)", "e: no layer (expected: one of " + layers + ")");
  }

  /** Each edge that does not go down a layer, and each package without one. */
  static List<String> wrongEdges(Map<String, Set<String>> graph, List<Set<String>> layers) {
    List<String> wrong = new ArrayList<>();
    graph.forEach((from, to) -> {
      int f = layerOf(from, layers);
      if (f < 0) {
        wrong.add(from + ": no layer (expected: one of " + layers + ")");
        return;
      }
      for (String target : to) {
        int t = layerOf(target, layers);
        if (t >= f) {
          wrong.add(from + " -> " + target + " (layer " + f + " names layer " + t + ")");
        }
      }
    });
    return wrong;
  }

  private static int layerOf(String pkg, List<Set<String>> layers) {
    for (int i = 0; i < layers.size(); i++) {
      if (layers.get(i).contains(pkg)) {
        return i;
      }
    }
    return -1;
  }

  /** Package to the packages of the manager it names, from jdeps over the compiled classes. */
  private static Map<String, Set<String>> packageGraph() {
    Path classes;
    try {
      classes = Path.of(ShardManager.class.getProtectionDomain().getCodeSource().getLocation().toURI());
    } catch (URISyntaxException e) {
      throw new IllegalStateException(e);
    }
    ToolProvider jdeps = ToolProvider.findFirst("jdeps")
        .orElseThrow(() -> new IllegalStateException("jdeps: missing (expected: tests run on a JDK)"));
    StringWriter out = new StringWriter();
    StringWriter err = new StringWriter();
    int rc = jdeps.run(new PrintWriter(out), new PrintWriter(err), "-verbose:package", classes.toString());
    assertThat(rc).as("jdeps: %s", err).isZero();
    Map<String, Set<String>> graph = new TreeMap<>();
    for (String line : out.toString().split("\n")) {
      Matcher m = EDGE.matcher(line);
      if (m.find() && inManager(m.group(1))) {
        Set<String> to = graph.computeIfAbsent(m.group(1), k -> new TreeSet<>());
        if (inManager(m.group(2)) && !m.group(2).equals(m.group(1))) {
          to.add(m.group(2));
        }
      }
    }
    return graph;
  }

  private static boolean inManager(String pkg) {
    return pkg.equals(ROOT) || pkg.startsWith(ROOT + ".");
  }
}
