package io.atoll.server;

import io.atoll.core.Space;
import io.atoll.core.allocation.AllocationStrategy;
import io.atoll.manager.SpaceSettings;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * Reads {@code atoll manager --space-settings}: per shard space, its own allocation settings,
 * with the global flags' names, e.g. {@code worker:max-moves=1,strategy=least-shard}. Each value
 * is one space ({@code ROLE:KEY=VALUE[,KEY=VALUE...]}); several are given by repeating the
 * option or separated by {@code ;} (one value for the environment or the file). A key not given
 * falls back to the global flag ({@code --max-moves}, {@code --max-moves-fraction},
 * {@code --strategy}).
 */
final class SpaceSettingsOption {

  static final String FORM = "ROLE:KEY=VALUE[,KEY=VALUE...] with keys max-moves (>= 1), max-moves-fraction"
      + " (> 0 and <= 1) and strategy (version-aware or least-shard), e.g. worker:max-moves=1,strategy=least-shard";

  private SpaceSettingsOption() {}

  /**
   * The settings by role ({@code ""} for {@code default}).
   *
   * @throws IllegalArgumentException naming the part that is wrong, what was got and the expected form
   */
  static Map<String, SpaceSettings> parse(List<String> values) {
    Map<String, SpaceSettings> byRole = new LinkedHashMap<>();
    for (String value : values) {
      for (String one : value.split(";", -1)) {
        String text = one.trim();
        int colon = text.indexOf(':');
        if (colon < 0) {
          throw new IllegalArgumentException("--space-settings '" + text + "' has no ':' after a role (expected: "
              + FORM + ")");
        }
        String name = text.substring(0, colon).trim();
        String role = name.equals("default") ? Space.DEFAULT_ROLE : name;
        if (role.isEmpty() && !name.equals("default")) {
          throw new IllegalArgumentException("--space-settings '" + text + "': an empty role (expected: a role, or"
              + " default for the default space; " + FORM + ")");
        }
        try {
          Space.checkRole(role);
        } catch (IllegalArgumentException e) {
          throw new IllegalArgumentException("--space-settings '" + text + "': " + e.getMessage(), e);
        }
        if (byRole.containsKey(role)) {
          throw new IllegalArgumentException("--space-settings: role '" + name + "' twice (expected: each role once)");
        }
        byRole.put(role, settings(text, text.substring(colon + 1)));
      }
    }
    return byRole;
  }

  private static SpaceSettings settings(String text, String keys) {
    Integer maxMoves = null;
    Double fraction = null;
    AllocationStrategy strategy = null;
    for (String part : keys.split(",", -1)) {
      int eq = part.indexOf('=');
      String key = eq < 0 ? part.trim() : part.substring(0, eq).trim();
      String v = eq < 0 ? "" : part.substring(eq + 1).trim();
      if (eq < 0 || v.isEmpty()) {
        throw new IllegalArgumentException("--space-settings '" + text + "': '" + part.trim() + "' has no value"
            + " (expected: " + FORM + ")");
      }
      switch (key) {
        case "max-moves" -> {
          checkOnce(text, key, maxMoves);
          try {
            maxMoves = Integer.parseInt(v);
          } catch (NumberFormatException e) {
            throw new IllegalArgumentException("--space-settings '" + text + "': max-moves '" + v
                + "' is not a whole number (expected: >= 1)");
          }
        }
        case "max-moves-fraction" -> {
          checkOnce(text, key, fraction);
          try {
            fraction = Double.parseDouble(v);
          } catch (NumberFormatException e) {
            throw new IllegalArgumentException("--space-settings '" + text + "': max-moves-fraction '" + v
                + "' is not a number (expected: > 0 and <= 1)");
          }
        }
        case "strategy" -> {
          checkOnce(text, key, strategy);
          strategy = switch (v.toLowerCase(Locale.ROOT)) {
            case "version-aware" -> AllocationStrategy.versionAware();
            case "least-shard" -> AllocationStrategy.leastShard();
            default -> throw new IllegalArgumentException("--space-settings '" + text + "': strategy '" + v
                + "' (expected: version-aware or least-shard)");
          };
        }
        default -> throw new IllegalArgumentException("--space-settings '" + text + "': unknown key '" + key
            + "' (expected: max-moves, max-moves-fraction or strategy)");
      }
    }
    try {
      return new SpaceSettings(maxMoves, fraction, strategy);
    } catch (IllegalArgumentException e) {
      throw new IllegalArgumentException("--space-settings '" + text + "': " + e.getMessage(), e);
    }
  }

  private static void checkOnce(String text, String key, Object seen) {
    if (seen != null) {
      throw new IllegalArgumentException("--space-settings '" + text + "': " + key + " twice (expected: once)");
    }
  }
}
