package io.atoll.server.demo;

import io.atoll.testkit.process.ProcessSpec;
import java.util.List;

/**
 * How the demo and the process tests start an {@code atoll} command as its own process on the
 * testkit's process harness: same JDK as found by {@link io.atoll.testkit.process.JavaBinary},
 * a small heap, the class path of this process (or of the packaged jar, which tests name with the
 * property {@code atoll.child.classpath}). Each such process announces its address with a line
 * "... listening on HOST:PORT".
 */
public final class AtollProcesses {

  private AtollProcesses() {}

  /** {@code atoll <args>} as a process named {@code name} (its log is {@code <name>.log}). */
  public static ProcessSpec atoll(String name, List<String> args) {
    return ProcessSpec.builder(name, "io.atoll.server.Main")
        .classpath(System.getProperty("atoll.child.classpath", System.getProperty("java.class.path")))
        .args(args)
        .build();
  }
}
