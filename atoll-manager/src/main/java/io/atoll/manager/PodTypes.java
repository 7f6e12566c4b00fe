package io.atoll.manager;

import io.atoll.core.PodId;
import io.atoll.core.TypeDeclaration;
import io.atoll.transport.grpc.Wire;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.SortedMap;
import java.util.SortedSet;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.function.Predicate;

/**
 * The entity types each pod declared when it registered (name to {@link TypeDeclaration}), and
 * the rule that keeps one type from being hosted with two roles or two hashers at once.
 *
 * <p><b>The rule.</b> A pod that registers is admitted only if, for every type it declares, its
 * declaration {@linkplain TypeDeclaration#agrees agrees} with that of every pod that
 * <em>binds</em>: a pod active in the config, or one whose join is being saved. A pod that left or
 * was declared dead binds no more: its GONE entry is saved only once it stopped its entities (it
 * left) or its lease has ended (it fenced itself), so no entity of the type is live there. The
 * last pod of a type gone, a new declaration is admitted: every entity of the type was stopped
 * with the old pods, and the new ones start under the new role or hasher.
 *
 * <p><b>After a manager start.</b> Declarations are not saved. The pods a starting manager
 * inherits are {@linkplain #inherit undeclared} until they declare again (a renewal's answer asks
 * them to: they send their Register once more) or show they declare nothing (a renewal from a pod
 * that predates this; an Atoll KV node). While an undeclared pod binds, a pod that declares any
 * type is refused for now ({@link Pending}, ABORTED with {@code Wire.TYPES_PENDING}: it retries): the undeclared pod may host
 * that type. A live pod renews every third of a lease, so the wait is about that long; a dead
 * one binds until it is declared dead.
 *
 * <p>Declarations are kept while the config names the pod, live or gone, so that a space no live
 * pod hosts can be reported with its types. Bounded by the config's pod table. Loop-confined.
 */
@GuardedBy("loop")
final class PodTypes {

  /** How many pods a refusal names per declaration. */
  private static final int NAMED_PODS = 5;

  private final Map<PodId, SortedMap<String, TypeDeclaration>> byPod = new HashMap<>();
  /** Pods whose join is being saved, with how many saves (a Register repeated): they bind as if live. */
  private final Map<PodId, Integer> joining = new HashMap<>();
  /** Pods inherited at this manager's start that have not declared their types to it yet. */
  private final Set<PodId> undeclared = new HashSet<>();

  /** A registration refused for now: pods this manager inherited have not declared their types yet. */
  static final class Pending extends RuntimeException {
    private static final long serialVersionUID = 1L;

    Pending(String message) {
      super(message, null, false, false);
    }
  }

  /** A registration refused: its declaration of a type disagrees with the live pods'. */
  static final class Refused extends IllegalStateException {
    private static final long serialVersionUID = 1L;

    Refused(String message) {
      super(message);
    }
  }

  /** A starting manager inherits {@code pods} (the config's active pods): none has declared to it yet. */
  void inherit(Collection<PodId> pods) {
    undeclared.addAll(pods);
  }

  /** Whether {@code pod} has not declared its types to this manager since it inherited the pod. */
  boolean undeclared(PodId pod) {
    return undeclared.contains(pod);
  }

  /** {@code pod} renewed as a pod that never declares types (it predates them, or a KV node). */
  void declaresNone(PodId pod) {
    undeclared.remove(pod);
  }

  /**
   * Checks that {@code pod}, which is not a member, may join declaring {@code types}; changes
   * nothing.
   *
   * @param live whether a pod is active in the config
   * @throws Refused (FAILED_PRECONDITION) naming the first type whose declaration disagrees with
   *     a binding pod's, the pod, and both declarations
   * @throws Pending (ABORTED) if {@code pod} declares a type while an inherited pod that binds
   *     has not declared its own yet
   */
  void admit(PodId pod, SortedMap<String, TypeDeclaration> types, Predicate<PodId> live) {
    if (types.isEmpty()) {
      return; // binds nothing, and nothing binds it: a pod that predates declarations, a KV node
    }
    List<PodId> waiting = new ArrayList<>();
    for (PodId p : undeclared) {
      if (!p.equals(pod) && binds(p, live)) {
        waiting.add(p);
      }
    }
    if (!waiting.isEmpty()) {
      throw new Pending("pod " + pod + " declares " + types.size() + " entity types, but this shard manager started"
          + " after " + waiting.size() + " live pods registered (" + names(waiting) + ") and they have not declared"
          + " their types to it yet (they do at their next lease renewal; expected: retry shortly)");
    }
    String conflict = conflict(pod, types, bindingDeclarations(pod, live));
    if (conflict != null) {
      throw new Refused(conflict);
    }
  }

  /**
   * The types {@code pod} declares with a hasher that binding pods host declaring none (pods that
   * predate fingerprints): a role-only declaration agrees with every hasher, so nothing checked
   * that this one places ids as theirs do. Empty if there is none. Changes nothing.
   */
  List<String> uncheckedHashers(PodId pod, SortedMap<String, TypeDeclaration> types, Predicate<PodId> live) {
    List<String> unchecked = new ArrayList<>();
    if (types.isEmpty()) {
      return unchecked;
    }
    Map<PodId, SortedMap<String, TypeDeclaration>> binding = bindingDeclarations(pod, live);
    for (Map.Entry<String, TypeDeclaration> t : types.entrySet()) {
      if (!t.getValue().hasHasher()) {
        continue;
      }
      boolean hosted = false;
      boolean checked = false;
      for (Map.Entry<PodId, SortedMap<String, TypeDeclaration>> b : binding.entrySet()) {
        TypeDeclaration d = b.getKey().equals(pod) ? null : b.getValue().get(t.getKey());
        if (d != null) {
          hosted = true;
          checked |= d.hasHasher();
        }
      }
      if (hosted && !checked) {
        unchecked.add(t.getKey());
      }
    }
    return unchecked;
  }

  /**
   * The rule itself, pure: the refusal of {@code pod} declaring {@code types} beside the pods of
   * {@code binding} (each with its declarations), or null if every type it declares agrees with
   * every binding pod's declaration of it.
   */
  static String conflict(PodId pod, SortedMap<String, TypeDeclaration> types,
      Map<PodId, SortedMap<String, TypeDeclaration>> binding) {
    for (Map.Entry<String, TypeDeclaration> t : types.entrySet()) {
      Map<TypeDeclaration, List<PodId>> against = new LinkedHashMap<>();
      binding.forEach((p, declared) -> {
        TypeDeclaration d = declared.get(t.getKey());
        if (!p.equals(pod) && d != null && !d.agrees(t.getValue())) {
          against.computeIfAbsent(d, k -> new ArrayList<>()).add(p);
        }
      });
      if (!against.isEmpty()) {
        List<String> theirs = new ArrayList<>();
        against.forEach((d, pods) -> theirs.add(d + " (pods " + names(pods) + ")"));
        return Wire.TYPES_REFUSED + "pod " + pod + " declares entity type '"
            + io.atoll.core.EntityAddress.printableTypeName(t.getKey()) + "' with " + t.getValue()
            + ", but live pods hosting it declare " + String.join("; ", theirs) + ". Two roles or hashers for one"
            + " type could make one entity live on two pods (expected: the live pods' role and hasher; change a"
            + " type's role or hasher only once no live pod hosts it)";
      }
    }
    return null;
  }

  /**
   * {@code pod}, admitted, declares {@code types}: they bind from now while its join is saved
   * ({@link #joined} or {@link #notJoined} after). Pods neither live nor named by the config
   * ({@code named}) are forgotten.
   */
  void joining(PodId pod, SortedMap<String, TypeDeclaration> types, Predicate<PodId> named) {
    forgetUnnamed(pod, named);
    if (!types.isEmpty()) {
      byPod.put(pod, new TreeMap<>(types));
    }
    joining.merge(pod, 1, Integer::sum);
  }

  /** A save of {@code pod}'s join is done: it binds as an active pod from now. */
  void joined(PodId pod) {
    joining.computeIfPresent(pod, (p, n) -> n > 1 ? n - 1 : null);
  }

  /**
   * A save of {@code pod}'s join failed: unless another is under way or the config names it
   * active after all ({@code live}), it is no member, and its declaration binds nothing.
   */
  void notJoined(PodId pod, Predicate<PodId> live) {
    joining.computeIfPresent(pod, (p, n) -> n > 1 ? n - 1 : null);
    if (!joining.containsKey(pod) && !live.test(pod)) {
      byPod.remove(pod);
    }
  }

  /**
   * {@code pod}, a member, declares {@code types} again (its Register repeated, or sent again
   * after this manager started). It is recorded whatever it says: the pod already serves. The
   * answer lists how it disagrees with the other binding pods (none unless a manager that did not
   * check admitted them), for the log.
   */
  List<String> redeclare(PodId pod, SortedMap<String, TypeDeclaration> types, Predicate<PodId> live,
      Predicate<PodId> named) {
    undeclared.remove(pod);
    forgetUnnamed(pod, named);
    String conflict = types.isEmpty() ? null : conflict(pod, types, bindingDeclarations(pod, live));
    if (types.isEmpty()) {
      byPod.remove(pod);
    } else {
      byPod.put(pod, new TreeMap<>(types));
    }
    return conflict == null ? List.of() : List.of(conflict.substring(Wire.TYPES_REFUSED.length()));
  }

  private boolean binds(PodId p, Predicate<PodId> live) {
    return joining.containsKey(p) || live.test(p);
  }

  private Map<PodId, SortedMap<String, TypeDeclaration>> bindingDeclarations(PodId except, Predicate<PodId> live) {
    Map<PodId, SortedMap<String, TypeDeclaration>> out = new HashMap<>();
    byPod.forEach((p, d) -> {
      if (!p.equals(except) && binds(p, live)) {
        out.put(p, d);
      }
    });
    return out;
  }

  private void forgetUnnamed(PodId keep, Predicate<PodId> named) {
    byPod.keySet().removeIf(p -> !p.equals(keep) && !joining.containsKey(p) && !named.test(p));
    undeclared.removeIf(p -> !named.test(p));
  }

  private static String names(List<PodId> pods) {
    List<String> s = new ArrayList<>();
    for (int i = 0; i < Math.min(NAMED_PODS, pods.size()); i++) {
      s.add(pods.get(i).toString());
    }
    return String.join(", ", s) + (pods.size() > NAMED_PODS ? " and " + (pods.size() - NAMED_PODS) + " more" : "");
  }

  /** The types declared on {@code role} by pods that {@code named} accepts, live or gone, by name. */
  SortedSet<String> onRole(Predicate<PodId> named, String role) {
    SortedSet<String> out = new TreeSet<>();
    byPod.forEach((pod, types) -> {
      if (named.test(pod)) {
        types.forEach((name, d) -> {
          if (d.role().equals(role)) {
            out.add(name);
          }
        });
      }
    });
    return out;
  }

  /**
   * Every type declared by pods that {@code named} accepts, name to declaration; where pods
   * declared one type differently, a live pod's declaration is shown.
   */
  SortedMap<String, TypeDeclaration> all(Predicate<PodId> named, Predicate<PodId> live) {
    SortedMap<String, TypeDeclaration> out = new TreeMap<>();
    byPod.forEach((pod, types) -> {
      if (named.test(pod) && !live.test(pod)) {
        out.putAll(types);
      }
    });
    byPod.forEach((pod, types) -> {
      if (live.test(pod)) {
        out.putAll(types);
      }
    });
    return out;
  }
}
