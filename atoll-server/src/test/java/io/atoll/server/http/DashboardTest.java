package io.atoll.server.http;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.charset.StandardCharsets;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;

/** The dashboard's traffic reports and rates, on a virtual clock. */
class DashboardTest {

  final AtomicLong now = new AtomicLong(1_000_000);
  final Dashboard d = new Dashboard(now::get, false);

  HttpEndpoint.Response report(String body) {
    return d.report(body.getBytes(StandardCharsets.UTF_8));
  }

  static String text(HttpEndpoint.Response r) {
    return new String(r.body(), StandardCharsets.UTF_8);
  }

  @Test
  void badReportsAreRefusedSayingWhatWasExpected() {
    assertThat(report("sent=1").status()).isEqualTo(400);
    assertThat(text(report("sent=1"))).isEqualTo("reporter: missing (expected: 1..200 characters)\n");
    HttpEndpoint.Response r = report("reporter=a&sent=x&handled=0&failed=0&asks=0&askNanos=0");
    assertThat(r.status()).isEqualTo(400);
    assertThat(text(r)).isEqualTo("sent: 'x' (expected: a count >= 0)\n");
    assertThat(text(report("reporter=a&sent=1&handled=-1&failed=0&asks=0&askNanos=0")))
        .isEqualTo("handled: -1 (expected: a count >= 0)\n");
    assertThat(text(report("reporter=a&sent=1&handled=1&failed=0&asks=0"))).isEqualTo(
        "askNanos: 'null' (expected: a count >= 0)\n");
    assertThat(report("reporter=" + "r".repeat(201) + "&sent=1").status()).isEqualTo(400);
  }

  @Test
  void reportersAreBounded() {
    for (int i = 0; i < Dashboard.MAX_REPORTERS; i++) {
      assertThat(report("reporter=r" + i + "&sent=0&handled=0&failed=0&asks=0&askNanos=0").status()).isEqualTo(200);
    }
    assertThat(report("reporter=one-more&sent=0&handled=0&failed=0&asks=0&askNanos=0").status()).isEqualTo(429);
    assertThat(report("reporter=r0&sent=5&handled=0&failed=0&asks=0&askNanos=0").status())
        .as("a known reporter may still report").isEqualTo(200);
  }

  @Test
  void ratesAreEachReportersGrowthPerSecondSummedAndStaleReportersAreForgotten() {
    report("reporter=a&sent=100&handled=90&failed=0&asks=10&askNanos=10000000");
    report("reporter=b&sent=0&handled=0&failed=0&asks=0&askNanos=0");
    d.sample(); // one report each: no rate yet
    assertThat(lastPoint().sentPerSecond()).isZero();
    now.addAndGet(2000);
    report("reporter=a&sent=300&handled=290&failed=2&asks=30&askNanos=50000000");
    report("reporter=b&sent=100&handled=100&failed=0&asks=0&askNanos=0");
    d.sample();
    d.sample(); // a sample between two reports repeats the rates (no drop to zero)
    Dashboard.Point p = lastPoint();
    assertThat(p.sentPerSecond()).isEqualTo(150.0);
    assertThat(p.handledPerSecond()).isEqualTo(150.0);
    assertThat(p.failedPerSecond()).isEqualTo(1.0);
    assertThat(p.askMillis()).isEqualTo(2.0); // 40 ms over 20 asks
    now.addAndGet(Dashboard.STALE_MILLIS + 1);
    report("reporter=a&sent=300&handled=290&failed=2&asks=30&askNanos=50000000");
    d.sample(); // b is forgotten; a sent nothing in those seconds
    assertThat(lastPoint().sentPerSecond()).isZero();
    now.addAndGet(1000);
    report("reporter=a&sent=0&handled=0&failed=0&asks=0&askNanos=0"); // a restarted: counters went down
    d.sample();
    assertThat(lastPoint().sentPerSecond()).as("a restart counts as no traffic, not negative").isZero();
  }

  private Dashboard.Point lastPoint() {
    return d.lastPoint();
  }
}
