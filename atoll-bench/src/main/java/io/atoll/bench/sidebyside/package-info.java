/**
 * The one command that measures Atoll and Pekko alternately and rewrites the side-by-side table of
 * docs/benchmarks.md, the loopback floor, and the pure logic behind them (result lines, medians,
 * ratios, the table). Not API.
 */
package io.atoll.bench.sidebyside;
