package io.atoll.bench.sidebyside;

/**
 * One row of the side-by-side table: a figure both sides report under the same scenario and key.
 * Atoll's advantage is Atoll ÷ Pekko when higher is better (throughput) and Pekko ÷ Atoll when
 * lower is better (latency, bytes, seconds), so every target reads "at least N times". Not API.
 *
 * @param label what the row measures
 * @param scenario the scenario Atoll's load generator runs for it
 * @param pekkoScenario the scenario Pekko's runs for it (the same one unless Atoll measures a
 *     variant Pekko has no counterpart of)
 * @param key the figure's key in the result lines
 * @param higherIsBetter true for rates
 * @param target the advantage the issue asks for, or 0 for none
 * @param unit the unit shown after the values
 */
public record Figure(String label, String scenario, String pekkoScenario, String key, boolean higherIsBetter,
    double target, String unit) {

  /** Checks the fields. @throws IllegalArgumentException for a blank name or a negative target */
  public Figure {
    if (label.isBlank() || scenario.isBlank() || pekkoScenario.isBlank() || key.isBlank()) {
      throw new IllegalArgumentException("figure: '" + label + "', '" + scenario + "', '" + pekkoScenario + "', '"
          + key + "' (expected: none blank)");
    }
    if (target < 0) {
      throw new IllegalArgumentException("target: " + target + " (expected: >= 0)");
    }
  }

  /** A figure both sides measure under the same scenario. */
  public Figure(String label, String scenario, String key, boolean higherIsBetter, double target, String unit) {
    this(label, scenario, scenario, key, higherIsBetter, target, unit);
  }

  /** The key of this figure in Atoll's results: {@code scenario key}. */
  public String id() {
    return scenario + " " + key;
  }

  /** The key of this figure in Pekko's results: {@code pekkoScenario key}. */
  public String pekkoId() {
    return pekkoScenario + " " + key;
  }

  /**
   * Atoll's advantage in one pair: how many times better Atoll's value is than Pekko's.
   *
   * @throws IllegalArgumentException if a value is not positive
   */
  public double advantage(double atoll, double pekko) {
    if (!(atoll > 0) || !(pekko > 0)) {
      throw new IllegalArgumentException(id() + ": atoll " + atoll + ", pekko " + pekko + " (expected: both > 0)");
    }
    return higherIsBetter ? atoll / pekko : pekko / atoll;
  }
}
