package io.atoll.runtime;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.DataInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.net.URISyntaxException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;

/**
 * Imports run one way between the runtime's packages, read from the compiled classes as {@code
 * jdeps -verbose:package} reads them (every class a class file names: its constant pool's classes,
 * and the types in its descriptors, signatures and annotations; not string constants): no two
 * packages depend on each other, directly or around a ring; the API packages name nothing under
 * {@code internal}; and no room under {@code internal} names {@code internal} itself, the top that
 * assembles them.
 */
class PackageImportsTest {

  private static final String ROOT = "io.atoll.runtime";
  private static final String INTERNAL = ROOT + ".internal";

  @Test
  void theRuntimesPackagesFormNoCycle() throws IOException {
    Map<String, Map<String, String>> graph = packageGraph();
    assertThat(graph).containsKeys(ROOT, INTERNAL, INTERNAL + ".host", INTERNAL + ".send");
    assertThat(cycles(graph)).as("package cycles (each with an edge and a class that makes it)\n%s",
        describe(cycles(graph), graph)).isEmpty();
  }

  @Test
  void theApiPackagesNameNothingInternal() throws IOException {
    List<String> wrong = new ArrayList<>();
    packageGraph().forEach((from, to) -> {
      if (!isInternal(from)) {
        to.forEach((target, clazz) -> {
          if (isInternal(target)) {
            wrong.add(from + " -> " + target + " (" + clazz + ")");
          }
        });
      }
    });
    assertThat(wrong).isEmpty();
  }

  @Test
  void noRoomNamesTheAssemblerAboveIt() throws IOException {
    List<String> wrong = new ArrayList<>();
    packageGraph().forEach((from, to) -> {
      if (from.startsWith(INTERNAL + ".") && to.containsKey(INTERNAL)) {
        wrong.add(from + " -> " + INTERNAL + " (" + to.get(INTERNAL) + ")");
      }
    });
    assertThat(wrong).isEmpty();
  }

  @Test
  void theCycleCheckFindsARing() {
    Map<String, Map<String, String>> g = new TreeMap<>();
    g.put("a", Map.of("b", "A"));
    g.put("b", Map.of("c", "B"));
    g.put("c", Map.of("a", "C"));
    g.put("d", Map.of("a", "D"));
    assertThat(cycles(g)).containsExactly(Set.of("a", "b", "c"));
    g.put("c", Map.of());
    assertThat(cycles(g)).isEmpty();
  }

  private static boolean isInternal(String pkg) {
    return pkg.equals(INTERNAL) || pkg.startsWith(INTERNAL + ".");
  }

  /** Package to package it names (within the runtime) to one class of the first that names it. */
  private static Map<String, Map<String, String>> packageGraph() throws IOException {
    Path classes;
    try {
      classes = Path.of(Sharding.class.getProtectionDomain().getCodeSource().getLocation().toURI());
    } catch (URISyntaxException e) {
      throw new IllegalStateException(e);
    }
    Map<String, Map<String, String>> graph = new TreeMap<>();
    List<Path> files;
    try (Stream<Path> walk = Files.walk(classes)) {
      files = walk.filter(p -> p.toString().endsWith(".class")).sorted().toList();
    }
    for (Path file : files) {
      String name = classes.relativize(file).toString().replace(java.io.File.separatorChar, '/');
      String pkg = packageOf(name);
      if (!pkg.equals(ROOT) && !pkg.startsWith(ROOT + ".")) {
        continue;
      }
      Map<String, String> out = graph.computeIfAbsent(pkg, k -> new TreeMap<>());
      try (InputStream in = Files.newInputStream(file)) {
        for (String used : classesNamed(in)) {
          String target = packageOf(used);
          if (!target.equals(pkg) && (target.equals(ROOT) || target.startsWith(ROOT + "."))) {
            out.putIfAbsent(target, name.replace('/', '.').replaceAll("\\.class$", "") + " -> " + used);
          }
        }
      }
    }
    return graph;
  }

  private static String packageOf(String binaryName) {
    int slash = binaryName.lastIndexOf('/');
    return slash < 0 ? "" : binaryName.substring(0, slash).replace('/', '.');
  }

  private static final Pattern DESCRIPTOR_TYPE = Pattern.compile("L([\\w/$]+)[;<]");

  /** Internal names of the classes a class file names (constant pool classes and descriptor types). */
  static Set<String> classesNamed(InputStream raw) throws IOException {
    DataInputStream in = new DataInputStream(raw);
    if (in.readInt() != 0xCAFEBABE) {
      throw new IOException("not a class file");
    }
    in.readUnsignedShort();
    in.readUnsignedShort();
    int count = in.readUnsignedShort();
    String[] utf8 = new String[count];
    Set<Integer> classIndexes = new HashSet<>();
    Set<Integer> stringIndexes = new HashSet<>();
    for (int i = 1; i < count; i++) {
      int tag = in.readUnsignedByte();
      switch (tag) {
        case 1 -> utf8[i] = in.readUTF();
        case 3, 4 -> in.readInt();
        case 5, 6 -> {
          in.readLong();
          i++; // two slots
        }
        case 7 -> classIndexes.add(in.readUnsignedShort());
        case 8 -> stringIndexes.add(in.readUnsignedShort());
        case 16, 19, 20 -> in.readUnsignedShort();
        case 9, 10, 11, 12, 17, 18 -> in.readInt();
        case 15 -> {
          in.readUnsignedByte();
          in.readUnsignedShort();
        }
        default -> throw new IOException("constant pool tag " + tag + " at " + i + " (expected: 1..20)");
      }
    }
    Set<String> out = new TreeSet<>();
    for (int i : classIndexes) {
      String n = utf8[i];
      out.add(n.startsWith("[") ? n.replaceAll("^\\[+L?", "").replaceAll(";$", "") : n);
    }
    for (int i = 1; i < count; i++) {
      if (utf8[i] != null && !stringIndexes.contains(i) && !classIndexes.contains(i)) {
        Matcher m = DESCRIPTOR_TYPE.matcher(utf8[i]);
        while (m.find()) {
          out.add(m.group(1));
        }
      }
    }
    return out;
  }

  /** The strongly connected components of more than one package (Tarjan). */
  static List<Set<String>> cycles(Map<String, Map<String, String>> graph) {
    List<Set<String>> out = new ArrayList<>();
    Map<String, Integer> index = new HashMap<>();
    Map<String, Integer> low = new HashMap<>();
    Deque<String> stack = new ArrayDeque<>();
    Set<String> onStack = new HashSet<>();
    int[] next = {0};
    for (String v : graph.keySet()) {
      if (!index.containsKey(v)) {
        strongConnect(v, graph, index, low, stack, onStack, next, out);
      }
    }
    return out;
  }

  private static void strongConnect(String v, Map<String, Map<String, String>> graph, Map<String, Integer> index,
      Map<String, Integer> low, Deque<String> stack, Set<String> onStack, int[] next, List<Set<String>> out) {
    index.put(v, next[0]);
    low.put(v, next[0]);
    next[0]++;
    stack.push(v);
    onStack.add(v);
    for (String w : graph.getOrDefault(v, Map.of()).keySet()) {
      if (!index.containsKey(w)) {
        strongConnect(w, graph, index, low, stack, onStack, next, out);
        low.put(v, Math.min(low.get(v), low.get(w)));
      } else if (onStack.contains(w)) {
        low.put(v, Math.min(low.get(v), index.get(w)));
      }
    }
    if (low.get(v).equals(index.get(v))) {
      Set<String> component = new TreeSet<>();
      String w;
      do {
        w = stack.pop();
        onStack.remove(w);
        component.add(w);
      } while (!w.equals(v));
      if (component.size() > 1) {
        out.add(component);
      }
    }
  }

  private static String describe(List<Set<String>> cycles, Map<String, Map<String, String>> graph) {
    StringBuilder b = new StringBuilder();
    for (Set<String> c : cycles) {
      for (String from : c) {
        graph.get(from).forEach((to, clazz) -> {
          if (c.contains(to)) {
            b.append("  ").append(from).append(" -> ").append(to).append(": ").append(clazz).append('\n');
          }
        });
      }
    }
    return b.toString();
  }
}
