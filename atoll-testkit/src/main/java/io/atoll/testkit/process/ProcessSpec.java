package io.atoll.testkit.process;

import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.regex.Pattern;

/**
 * How to start one Java process: the binary, JVM options, class path, main class and arguments.
 * Immutable; make one with {@link #builder}.
 *
 * @param name a short name, unique in its {@link ProcessCluster}; its log is {@code <name>.log}
 * @param java the binary
 * @param jvmOptions options before the class path (heap, GC, opens)
 * @param classpath the class path
 * @param mainClass the main class
 * @param args the program's arguments
 */
public record ProcessSpec(String name, JavaBinary java, List<String> jvmOptions, String classpath, String mainClass,
    List<String> args) {

  private static final Pattern NAME = Pattern.compile("[A-Za-z0-9][A-Za-z0-9._-]{0,63}");

  /**
   * Checks the parts and copies the lists.
   *
   * @throws IllegalArgumentException if the name is not 1..64 of letters, digits, '.', '_', '-'
   *     (starting with a letter or digit), or the class path or main class is blank
   */
  public ProcessSpec {
    Objects.requireNonNull(name, "name");
    Objects.requireNonNull(java, "java");
    if (!NAME.matcher(name).matches()) {
      throw new IllegalArgumentException("process name: '" + name
          + "' (expected: 1..64 letters, digits, '.', '_' or '-', starting with a letter or digit)");
    }
    if (classpath == null || classpath.isBlank() || mainClass == null || mainClass.isBlank()) {
      throw new IllegalArgumentException("class path: '" + classpath + "', main class: '" + mainClass
          + "' (expected: both set)");
    }
    jvmOptions = List.copyOf(jvmOptions);
    args = List.copyOf(args);
  }

  /**
   * A builder for {@code mainClass} named {@code name}, with {@link JavaBinary#find()}, this JVM's
   * class path and the options an Atoll process needs (see {@link Builder#heap}).
   */
  public static Builder builder(String name, String mainClass) {
    return new Builder(name, mainClass);
  }

  /** The command line. */
  public List<String> command() {
    List<String> cmd = new ArrayList<>();
    cmd.add(java.path().toString());
    cmd.addAll(jvmOptions);
    cmd.add("-cp");
    cmd.add(classpath);
    cmd.add(mainClass);
    cmd.addAll(args);
    return cmd;
  }

  /** Builds a {@link ProcessSpec}. Not thread-safe. */
  public static final class Builder {
    private final String name;
    private final String mainClass;
    private JavaBinary java;
    private String classpath = System.getProperty("java.class.path");
    private String heap = "256m";
    private boolean quickStart = true;
    private final List<String> extraOptions = new ArrayList<>();
    private final List<String> args = new ArrayList<>();

    private Builder(String name, String mainClass) {
      this.name = name;
      this.mainClass = mainClass;
    }

    /** The binary. Default: {@link JavaBinary#find()}. */
    public Builder java(JavaBinary j) {
      this.java = Objects.requireNonNull(j, "java");
      return this;
    }

    /** The class path. Default: this JVM's. */
    public Builder classpath(String cp) {
      this.classpath = Objects.requireNonNull(cp, "classpath");
      return this;
    }

    /**
     * The maximum heap, as {@code -Xmx} takes it. Default {@code 256m}: tests start several
     * processes on small machines.
     *
     * @throws IllegalArgumentException unless digits followed by k, m or g
     */
    public Builder heap(String xmx) {
      if (xmx == null || !xmx.matches("\\d{1,6}[kKmMgG]")) {
        throw new IllegalArgumentException("heap: '" + xmx + "' (expected: e.g. 256m or 1g)");
      }
      this.heap = xmx;
      return this;
    }

    /**
     * Whether to trade peak speed for a quick, small start (the serial collector and the C1
     * compiler only). Default true; a benchmark turns it off.
     */
    public Builder quickStart(boolean on) {
      this.quickStart = on;
      return this;
    }

    /** More JVM options, after the defaults. */
    public Builder jvmOptions(List<String> options) {
      extraOptions.addAll(options);
      return this;
    }

    /** The program's arguments, appended. */
    public Builder args(List<String> a) {
      args.addAll(a);
      return this;
    }

    /** The program's arguments, appended. */
    public Builder args(String... a) {
      return args(List.of(a));
    }

    /** The spec. @throws IllegalArgumentException as {@link ProcessSpec} does */
    public ProcessSpec build() {
      JavaBinary j = java != null ? java : JavaBinary.find();
      List<String> options = new ArrayList<>();
      options.add("-Xmx" + heap);
      if (quickStart) {
        options.add("-XX:+UseSerialGC");
        options.add("-XX:TieredStopAtLevel=1");
      }
      options.add("--add-opens=java.base/java.lang.invoke=ALL-UNNAMED"); // the default codec, Fory
      options.add("--enable-native-access=ALL-UNNAMED"); // Netty's native transport
      if (j.feature() >= 23) {
        options.add("--sun-misc-unsafe-memory-access=allow"); // Netty still uses sun.misc.Unsafe
      }
      options.addAll(extraOptions);
      return new ProcessSpec(name, j, options, classpath, mainClass, args);
    }
  }
}
