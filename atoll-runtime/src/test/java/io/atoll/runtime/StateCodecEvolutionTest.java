package io.atoll.runtime;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.IOException;
import java.lang.reflect.RecordComponent;
import java.net.URL;
import java.net.URLClassLoader;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import javax.tools.JavaCompiler;
import javax.tools.ToolProvider;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * What the default state codec promises when a state class changes between releases: two versions
 * of one record, {@code evolution.Account}, are compiled here and loaded side by side, and the bytes
 * one version wrote are read by the other.
 */
class StateCodecEvolutionTest {

  @TempDir
  Path dir;

  /** Compiles {@code source} as {@code evolution/Account.java} into a directory of its own and loads it. */
  private Class<?> version(String name, String source) throws IOException, ClassNotFoundException {
    Path src = dir.resolve(name + "/src/evolution/Account.java");
    Path out = dir.resolve(name + "/classes");
    Files.createDirectories(src.getParent());
    Files.createDirectories(out);
    Files.writeString(src, "package evolution;\n" + source);
    JavaCompiler javac = ToolProvider.getSystemJavaCompiler();
    assertThat(javac).as("a JDK's compiler").isNotNull();
    assertThat(javac.run(null, null, null, "-d", out.toString(), src.toString())).isZero();
    URLClassLoader loader = new URLClassLoader(new URL[] {out.toUri().toURL()}, getClass().getClassLoader());
    return loader.loadClass("evolution.Account");
  }

  private static Object make(Class<?> c, Object... values) throws ReflectiveOperationException {
    Class<?>[] types = java.util.Arrays.stream(c.getRecordComponents()).map(RecordComponent::getType)
        .toArray(Class<?>[]::new);
    return c.getDeclaredConstructor(types).newInstance(values);
  }

  private static Object get(Object record, String component) throws ReflectiveOperationException {
    for (RecordComponent rc : record.getClass().getRecordComponents()) {
      if (rc.getName().equals(component)) {
        return rc.getAccessor().invoke(record);
      }
    }
    throw new AssertionError("no component " + component);
  }

  @SuppressWarnings("unchecked")
  private static <S> StateCodec<S> codec(Class<?> c) {
    return StateCodec.of((Class<S>) c);
  }

  @Test
  void aFieldAddedReadsAsItsDefaultAndAFieldRemovedIsSkipped() throws Exception {
    Class<?> v1 = version("v1", "public record Account(long cents, String owner) {}");
    Class<?> v2 = version("v2", "public record Account(long cents, String owner, int flags, String currency) {}");
    Class<?> v3 = version("v3", "public record Account(long cents, String currency) {}");

    byte[] written = StateCodecEvolutionTest.<Object>codec(v1).encode(make(v1, 1234L, "ada"));
    Object read = StateCodecEvolutionTest.<Object>codec(v2).decode(written);
    assertThat(read.getClass()).isSameAs(v2);
    assertThat(List.of(get(read, "cents"), get(read, "owner"), get(read, "flags"))).containsExactly(1234L, "ada", 0);
    assertThat(get(read, "currency")).isNull();

    byte[] fromV2 = StateCodecEvolutionTest.<Object>codec(v2).encode(make(v2, 99L, "bob", 7, "EUR"));
    Object older = StateCodecEvolutionTest.<Object>codec(v3).decode(fromV2);
    assertThat(List.of(get(older, "cents"), get(older, "currency"))).containsExactly(99L, "EUR");
  }

  @Test
  void bytesOfAnotherStateClassAreRefused() throws Exception {
    Class<?> v1 = version("v1", "public record Account(long cents, String owner) {}");
    byte[] written = StateCodecEvolutionTest.<Object>codec(v1).encode(make(v1, 1L, "ada"));
    assertThatThrownBy(() -> StateCodec.of(Other.class).decode(written))
        .isInstanceOf(IllegalArgumentException.class);
  }

  /** A state class of this test. */
  record Other(long cents) {}
}
