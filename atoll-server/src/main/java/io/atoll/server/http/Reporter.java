package io.atoll.server.http;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Timer;
import java.net.URI;
import java.net.URLEncoder;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;

/**
 * Sends a sender's message counters (from its {@link io.atoll.runtime.metrics.PodMetrics} meters)
 * to the manager's dashboard, {@code POST /api/report}, once a second, on a daemon thread.
 * Failures are ignored and the next report tries again: the dashboard is best effort.
 */
public final class Reporter implements AutoCloseable {

  private final ScheduledExecutorService timer = Executors.newSingleThreadScheduledExecutor(r -> {
    Thread t = new Thread(r, "atoll-reporter");
    t.setDaemon(true);
    return t;
  });

  private Reporter(String dashboard, String reporter, MeterRegistry registry) {
    URI uri = URI.create("http://" + dashboard + "/api/report");
    HttpClient client = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(1)).build();
    timer.scheduleWithFixedDelay(() -> {
      try {
        client.send(HttpRequest.newBuilder(uri).timeout(Duration.ofSeconds(2))
            .header("Content-Type", "application/x-www-form-urlencoded")
            .POST(HttpRequest.BodyPublishers.ofString(body(reporter, registry))).build(),
            HttpResponse.BodyHandlers.discarding());
      } catch (java.io.IOException e) {
        // the manager is down or restarting; the next report tries again
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
      }
    }, 0, 1, TimeUnit.SECONDS);
  }

  /**
   * Starts reporting {@code registry}'s message counters as {@code reporter} to the dashboard at
   * {@code dashboard} ({@code host:port}).
   *
   * @throws IllegalArgumentException if {@code dashboard} is not a {@code host:port}
   */
  public static Reporter start(String dashboard, String reporter, MeterRegistry registry) {
    io.atoll.core.PodAddress.parse(dashboard); // validates host:port, with its own message
    return new Reporter(dashboard, reporter, registry);
  }

  static String body(String reporter, MeterRegistry r) {
    double sent = sum(r, "atoll.messages.sent");
    double handled = sum(r, "atoll.messages.handled");
    double failed = sum(r, "atoll.messages.failed");
    Timer asks = r.find("atoll.ask.latency").timer();
    return "reporter=" + URLEncoder.encode(reporter, StandardCharsets.UTF_8) + "&sent=" + (long) sent + "&handled="
        + (long) handled + "&failed=" + (long) failed + "&asks=" + (asks == null ? 0 : asks.count()) + "&askNanos="
        + (asks == null ? 0 : (long) asks.totalTime(TimeUnit.NANOSECONDS));
  }

  private static double sum(MeterRegistry r, String name) {
    double s = 0;
    for (Counter c : r.find(name).counters()) {
      s += c.count();
    }
    return s;
  }

  /** Stops reporting. */
  @Override
  public void close() {
    timer.shutdownNow();
  }
}
