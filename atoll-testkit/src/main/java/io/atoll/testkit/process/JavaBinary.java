package io.atoll.testkit.process;

import java.io.IOException;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * A {@code java} binary and its feature version, found the way the {@code ./atoll} launcher finds
 * one: the property {@code atoll.java} if set; else this JVM's own binary; else the newest JDK 21+
 * among {@code JAVA_HOME}, the {@code PATH}, {@code /usr/lib/jvm}, {@code /opt/java} and
 * {@code ~/.sdkman}. Versions are read from each JDK's {@code release} file, so nothing is run.
 *
 * @param path the executable
 * @param feature its feature version (21 for Java 21), 0 if unknown
 */
public record JavaBinary(Path path, int feature) {

  /** The oldest Java an Atoll process runs on. */
  public static final int MIN_FEATURE = 21;

  private static final Pattern VERSION = Pattern.compile("JAVA_VERSION=\"(\\d+)");

  /**
   * Finds a Java 21+ binary (see the class comment).
   *
   * @throws IllegalStateException if there is none, naming the places looked at
   */
  public static JavaBinary find() {
    String forced = System.getProperty("atoll.java");
    if (forced != null && !forced.isBlank()) {
      Path p = Path.of(forced);
      return new JavaBinary(p, versionOf(p).orElse(0));
    }
    Path own = Path.of(System.getProperty("java.home"), "bin", "java");
    if (Files.isExecutable(own) && Runtime.version().feature() >= MIN_FEATURE) {
      return new JavaBinary(own, Runtime.version().feature());
    }
    JavaBinary best = null;
    for (Path c : candidates()) {
      int v = versionOf(c).orElse(0);
      if (Files.isExecutable(c) && v >= MIN_FEATURE && (best == null || v > best.feature())) {
        best = new JavaBinary(c, v);
      }
    }
    if (best == null) {
      throw new IllegalStateException("no Java " + MIN_FEATURE + "+ found (looked at atoll.java, this JVM, JAVA_HOME,"
          + " PATH, /usr/lib/jvm, /opt/java, ~/.sdkman)");
    }
    return best;
  }

  private static List<Path> candidates() {
    List<Path> out = new ArrayList<>();
    String home = System.getenv("JAVA_HOME");
    if (home != null && !home.isBlank()) {
      out.add(Path.of(home, "bin", "java"));
    }
    String path = System.getenv("PATH");
    if (path != null) {
      for (String d : path.split(java.io.File.pathSeparator)) {
        if (!d.isBlank()) {
          out.add(Path.of(d, "java"));
        }
      }
    }
    List<Path> roots = List.of(Path.of("/usr/lib/jvm"), Path.of("/opt/java"),
        Path.of(System.getProperty("user.home"), ".sdkman", "candidates", "java"));
    for (Path root : roots) {
      if (!Files.isDirectory(root)) {
        continue;
      }
      try (DirectoryStream<Path> s = Files.newDirectoryStream(root)) {
        for (Path jdk : s) {
          out.add(jdk.resolve("bin").resolve("java"));
        }
      } catch (IOException e) {
        // an unreadable directory holds no candidates
      }
    }
    return out;
  }

  /** The feature version in the {@code release} file of the JDK that holds {@code java}. */
  static Optional<Integer> versionOf(Path java) {
    try {
      Path real = java.toRealPath();
      Path release = real.getParent().getParent().resolve("release");
      if (!Files.isRegularFile(release)) {
        return Optional.empty();
      }
      Matcher m = VERSION.matcher(Files.readString(release));
      if (!m.find()) {
        return Optional.empty();
      }
      int v = Integer.parseInt(m.group(1));
      return Optional.of(v == 1 ? 8 : v); // "1.8.0" is Java 8
    } catch (IOException | RuntimeException e) {
      return Optional.empty();
    }
  }
}
