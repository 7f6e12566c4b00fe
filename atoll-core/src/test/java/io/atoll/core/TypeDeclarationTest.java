package io.atoll.core;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import org.junit.jupiter.api.Test;

class TypeDeclarationTest {

  /** A modulus hasher with a seed: one class, many behaviours. */
  private record Seeded(int seed) implements ShardHasher {
    @Override
    public int shardOf(String id, int n) {
      return Math.floorMod(id.hashCode() * 31 + seed, n) + 1;
    }
  }

  @Test
  void theFingerprintIsTheHashersBehaviourNotItsClass() {
    ShardHasher sameAsDefault = (id, n) -> Math.abs(id.hashCode() % n) + 1;
    assertThat(HasherFingerprint.of(sameAsDefault)).isEqualTo(HasherFingerprint.of(ShardHasher.DEFAULT));
    assertThat(HasherFingerprint.of(new Seeded(1))).isEqualTo(HasherFingerprint.of(new Seeded(1)))
        .isNotEqualTo(HasherFingerprint.of(new Seeded(2)))
        .isNotEqualTo(HasherFingerprint.of(ShardHasher.DEFAULT));
  }

  @Test
  void aHasherThatDiffersOnlyAtOneCountOrForOneIdIsToldApart() {
    ShardHasher at300 = (id, n) -> n == 300 ? 1 : ShardHasher.DEFAULT.shardOf(id, n);
    ShardHasher throwsForUsers = (id, n) -> {
      if (id.startsWith("user-")) {
        throw new IllegalArgumentException("not a number: " + id);
      }
      return ShardHasher.DEFAULT.shardOf(id, n);
    };
    long d = HasherFingerprint.of(ShardHasher.DEFAULT);
    assertThat(HasherFingerprint.of(at300)).isNotEqualTo(d);
    assertThat(HasherFingerprint.of(throwsForUsers)).isNotEqualTo(d);
  }

  @Test
  void aHasherThatThrowsAnErrorHasAFingerprintAndAStackOverflowPropagates() {
    ShardHasher asserts = (id, n) -> {
      if (id.startsWith("1")) {
        throw new AssertionError("no ids starting with 1");
      }
      return ShardHasher.DEFAULT.shardOf(id, n);
    };
    assertThat(HasherFingerprint.of(asserts)).isNotEqualTo(HasherFingerprint.of(ShardHasher.DEFAULT))
        .isEqualTo(HasherFingerprint.of(asserts));
    ShardHasher recurses = new ShardHasher() {
      @Override
      public int shardOf(String id, int n) {
        return shardOf(id, n);
      }
    };
    org.assertj.core.api.Assertions.assertThatThrownBy(() -> HasherFingerprint.of(recurses))
        .isInstanceOf(StackOverflowError.class);
  }

  @Test
  void theNameIsPrintableAndStableForALambda() {
    assertThat(HasherFingerprint.nameOf(ShardHasher.DEFAULT)).isEqualTo("ShardHasher.DEFAULT");
    ShardHasher lambda = (id, n) -> 1;
    // A hidden class's name ends in "/0x..." which changes from run to run: it is cut.
    assertThat(HasherFingerprint.nameOf(lambda)).startsWith("io.atoll.core.TypeDeclarationTest$$Lambda")
        .doesNotContain("/");
    assertThat(HasherFingerprint.nameOf(new Seeded(3))).isEqualTo("io.atoll.core.TypeDeclarationTest$Seeded");
  }

  @Test
  void declarationsAgreeOnRoleAndFingerprintAndOneWithoutAHasherOnRoleAlone() {
    TypeDeclaration a = TypeDeclaration.of("worker", new Seeded(1));
    assertThat(a.agrees(TypeDeclaration.of("worker", new Seeded(1)))).isTrue();
    assertThat(a.agrees(TypeDeclaration.of("worker", new Seeded(2)))).isFalse();
    assertThat(a.agrees(TypeDeclaration.of("", new Seeded(1)))).isFalse();
    assertThat(a.agrees(TypeDeclaration.roleOnly("worker"))).isTrue();
    assertThat(TypeDeclaration.roleOnly("worker").agrees(a)).isTrue();
    assertThat(a.agrees(TypeDeclaration.roleOnly("batch"))).isFalse();
    // The name is for messages only: another class name with the same behaviour agrees.
    assertThat(a.agrees(new TypeDeclaration("worker", a.fingerprint(), "other.Name"))).isTrue();
    assertThat(a.toString()).contains("role 'worker'", "hasher io.atoll.core.TypeDeclarationTest$Seeded",
        "fingerprint " + String.format("%016x", a.fingerprint()));
    assertThat(TypeDeclaration.roleOnly("").toString()).isEqualTo("the default role, no hasher declared");
  }

  @Test
  void aDeclarationOutOfFormIsRefusedNamingThePart() {
    assertThatThrownBy(() -> new TypeDeclaration("worker", 1, "a\nb")).hasMessageContaining("hasher name: character"
        + " U+000A at 1 (expected: 0..255 of [A-Za-z0-9._$-])");
    assertThatThrownBy(() -> new TypeDeclaration("worker", 1, "x".repeat(256)))
        .hasMessageContaining("hasher name: length 256 (expected: 0..255)");
    assertThatThrownBy(() -> new TypeDeclaration("worker", 7, "")).hasMessageContaining("without a hasher name");
    assertThatThrownBy(() -> new TypeDeclaration("bad role", 1, "h")).hasMessageContaining("role:");
  }

  @Test
  void typeNamesAreCheckedCharacterByCharacter() {
    assertThat(EntityAddress.checkTypeName("com.example.Outer$Inner")).isEqualTo("com.example.Outer$Inner");
    assertThat(EntityAddress.checkTypeName("billing:invoice-v2_x")).isEqualTo("billing:invoice-v2_x");
    assertThatThrownBy(() -> EntityAddress.checkTypeName("job\nINFO fake line"))
        .hasMessage("entity type: character U+000A at 3 (expected: 1..255 of [A-Za-z0-9._:$-])");
    assertThatThrownBy(() -> EntityAddress.checkTypeName("a b")).hasMessageContaining("U+0020 at 1");
    assertThatThrownBy(() -> EntityAddress.checkTypeName("\u202eevil")).hasMessageContaining("U+202E at 0");
    assertThatThrownBy(() -> EntityAddress.checkTypeName("")).hasMessageContaining("length 0 (expected: 1..255");
    assertThatThrownBy(() -> EntityAddress.checkTypeName("x".repeat(256))).hasMessageContaining("length 256");
  }
}
