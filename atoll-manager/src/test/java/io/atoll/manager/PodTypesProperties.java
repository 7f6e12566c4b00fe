package io.atoll.manager;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.atoll.core.PodAddress;
import io.atoll.core.PodId;
import io.atoll.core.TypeDeclaration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.SortedMap;
import java.util.TreeMap;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.constraints.IntRange;
import net.jqwik.api.constraints.Size;
import org.junit.jupiter.api.Test;

/**
 * The rule of {@link PodTypes} on histories of registrations, saves, departures and manager
 * restarts: no two pods that may host entities at once (active, or joining) ever declare one
 * type in ways that disagree, whatever the order.
 */
class PodTypesProperties {

  /** The declarations a pod may give a type: two roles, two hashers, and none (role only). */
  static final List<TypeDeclaration> CHOICES = List.of(
      TypeDeclaration.roleOnly(""),
      new TypeDeclaration("", 1, "H1"),
      new TypeDeclaration("", 2, "H2"),
      new TypeDeclaration("w", 1, "H1"),
      TypeDeclaration.roleOnly("w"));
  static final List<String> TYPES = List.of("a", "b");
  static final int SLOTS = 5;

  /** One simulated manager and the truth about the pods it serves. */
  static final class History {
    PodTypes types = new PodTypes();
    /** The pods the config names active, and the pods whose join is being saved. */
    final Set<PodId> live = new HashSet<>();
    final Set<PodId> joining = new HashSet<>();
    final Set<PodId> named = new HashSet<>();
    /** What each pod really hosts, whatever the manager knows. */
    final Map<PodId, SortedMap<String, TypeDeclaration>> truth = new HashMap<>();
    final Map<Integer, PodId> bySlot = new HashMap<>();
    final Set<PodId> asked = new HashSet<>();
    long incarnations;
    int admitted;

    void step(int v) {
      int op = v % 7;
      int slot = (v / 7) % SLOTS;
      PodId pod = bySlot.get(slot);
      switch (op) {
        case 0, 1 -> { // a new incarnation registers in the slot if it is empty
          if (pod != null) {
            return;
          }
          PodId p = new PodId(new PodAddress("127.0.0.1", 7000 + slot), ++incarnations);
          SortedMap<String, TypeDeclaration> declared = new TreeMap<>();
          int a = (v / 35) % 6;
          int b = (v / 210) % 6;
          if (a < CHOICES.size()) {
            declared.put("a", CHOICES.get(a));
          }
          if (b < CHOICES.size()) {
            declared.put("b", CHOICES.get(b));
          }
          try {
            types.admit(p, declared, live::contains);
          } catch (PodTypes.Refused | PodTypes.Pending e) {
            return;
          }
          types.joining(p, declared, named::contains);
          joining.add(p);
          truth.put(p, declared);
          bySlot.put(slot, p);
          admitted++;
        }
        case 2 -> { // its join is saved, or fails to save
          if (pod != null && joining.remove(pod)) {
            if ((v / 35) % 4 == 0) {
              types.notJoined(pod, live::contains);
              truth.remove(pod);
              bySlot.remove(slot);
            } else {
              types.joined(pod);
              live.add(pod);
              named.add(pod);
            }
          }
        }
        case 3 -> { // it leaves or dies: GONE is saved once its entities stopped
          if (pod != null && live.remove(pod)) {
            truth.remove(pod);
            bySlot.remove(slot);
          }
        }
        case 4 -> { // the manager restarts: joins in flight were saved or not; nothing declared survives
          for (PodId p : joining) {
            if ((v / 35) % 2 == 0) {
              live.add(p);
              named.add(p);
            } else {
              truth.remove(p);
              bySlot.values().remove(p);
            }
          }
          joining.clear();
          asked.clear();
          types = new PodTypes();
          types.inherit(live);
        }
        case 5 -> { // it renews: a pod with types is asked to declare them again, one without none
          if (pod != null && live.contains(pod) && types.undeclared(pod)) {
            if (truth.get(pod).isEmpty() && (v / 35) % 2 == 0) {
              types.declaresNone(pod); // as a KV node or an older pod: it never declares
            } else {
              asked.add(pod);
            }
          }
        }
        default -> { // a pod that was asked sends its Register again
          if (pod != null && live.contains(pod) && asked.remove(pod)) {
            assertThat(types.redeclare(pod, truth.get(pod), live::contains, named::contains)).isEmpty();
          }
        }
      }
    }

    /** Every two pods that may host at once agree on every type they both declare. */
    void checkNoTwoWays() {
      List<PodId> hosting = new ArrayList<>(live);
      hosting.addAll(joining);
      for (PodId p : hosting) {
        for (PodId q : hosting) {
          if (p.equals(q)) {
            continue;
          }
          for (String t : TYPES) {
            TypeDeclaration dp = truth.get(p).get(t);
            TypeDeclaration dq = truth.get(q).get(t);
            if (dp != null && dq != null) {
              assertThat(dp.agrees(dq)).as("type %s: %s declares %s, %s declares %s", t, p, dp, q, dq).isTrue();
            }
          }
        }
      }
    }
  }

  @Property
  void noHistoryAdmitsTwoHostingPodsThatDeclareATypeDifferently(
      @ForAll @Size(min = 1, max = 120) List<@IntRange(min = 0, max = 100_000) Integer> steps) {
    History h = new History();
    for (int v : steps) {
      h.step(v);
      h.checkNoTwoWays();
    }
  }

  @Test
  void theLastPodOfATypeGoneANewDeclarationIsAdmitted() {
    PodTypes types = new PodTypes();
    Set<PodId> live = new HashSet<>();
    PodId old = new PodId(new PodAddress("127.0.0.1", 7000), 1);
    PodId fresh = new PodId(new PodAddress("127.0.0.1", 7001), 2);
    SortedMap<String, TypeDeclaration> h1 = new TreeMap<>(Map.of("job", CHOICES.get(1)));
    SortedMap<String, TypeDeclaration> h2 = new TreeMap<>(Map.of("job", CHOICES.get(2)));
    types.admit(old, h1, live::contains);
    types.joining(old, h1, live::contains);
    // Still joining (not saved yet): it binds already.
    assertThatThrownBy(() -> types.admit(fresh, h2, live::contains)).isInstanceOf(PodTypes.Refused.class);
    types.joined(old);
    live.add(old);
    assertThatThrownBy(() -> types.admit(fresh, h2, live::contains)).isInstanceOf(PodTypes.Refused.class)
        .hasMessage("entity type declaration refused: pod " + fresh + " declares entity type 'job' with the default"
            + " role, hasher H2 (fingerprint 0000000000000002), but live pods hosting it declare the default role,"
            + " hasher H1 (fingerprint 0000000000000001) (pods " + old + "). Two roles or hashers for one type could"
            + " make one entity live on two pods (expected: the live pods' role and hasher; change a type's role or"
            + " hasher only once no live pod hosts it)");
    types.admit(fresh, h1, live::contains); // the same hasher: admitted
    live.remove(old); // gone
    types.admit(fresh, h2, live::contains);
  }

  @Test
  void aJoinSavedTwiceStillBindsWhenOneOfTheSavesFails() {
    PodTypes types = new PodTypes();
    Set<PodId> live = new HashSet<>();
    PodId p = new PodId(new PodAddress("127.0.0.1", 7000), 1);
    PodId q = new PodId(new PodAddress("127.0.0.1", 7001), 2);
    SortedMap<String, TypeDeclaration> h1 = new TreeMap<>(Map.of("job", CHOICES.get(1)));
    SortedMap<String, TypeDeclaration> h2 = new TreeMap<>(Map.of("job", CHOICES.get(2)));
    types.joining(p, h1, live::contains);
    types.joining(p, h1, live::contains); // its Register repeated while the first save is under way
    types.notJoined(p, live::contains);
    assertThatThrownBy(() -> types.admit(q, h2, live::contains)).isInstanceOf(PodTypes.Refused.class);
    types.notJoined(p, live::contains);
    types.admit(q, h2, live::contains); // both saves failed: p is no member
  }

  @Test
  void afterAStartAPodWithTypesWaitsForTheInheritedPodsToDeclareAgain() {
    PodTypes types = new PodTypes();
    PodId old = new PodId(new PodAddress("127.0.0.1", 7000), 1);
    PodId kv = new PodId(new PodAddress("127.0.0.1", 7002), 3);
    PodId fresh = new PodId(new PodAddress("127.0.0.1", 7001), 2);
    Set<PodId> live = Set.of(old, kv);
    types.inherit(live);
    SortedMap<String, TypeDeclaration> h2 = new TreeMap<>(Map.of("job", CHOICES.get(2)));
    assertThatThrownBy(() -> types.admit(fresh, h2, live::contains)).isInstanceOf(PodTypes.Pending.class)
        .hasMessageContaining("this shard manager started after 2 live pods registered")
        .hasMessageContaining("expected: retry shortly");
    types.admit(fresh, new TreeMap<>(), live::contains); // a pod that declares nothing is not held
    types.declaresNone(kv);
    assertThat(types.redeclare(old, new TreeMap<>(Map.of("job", CHOICES.get(1))), live::contains, live::contains))
        .isEmpty();
    assertThatThrownBy(() -> types.admit(fresh, h2, live::contains)).isInstanceOf(PodTypes.Refused.class);
  }
}
