package io.atoll.server.http;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.atoll.core.Ticker;
import io.atoll.core.spi.PodHealth;
import io.atoll.manager.ManagerSettings;
import io.atoll.manager.ShardManager;
import io.atoll.manager.metrics.ManagerMetrics;
import io.atoll.runtime.Sharding;
import io.atoll.runtime.metrics.PodMetrics;
import io.atoll.server.demo.Account;
import io.atoll.server.demo.AccountMsg;
import io.atoll.store.file.FileAssignmentStore;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.Random;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The manager's dashboard in a real headless Chromium: a manager with its HTTP endpoint and two
 * pods over gRPC on loopback; the page shows both pods, their shards and traffic, and, without
 * reloading, the third pod that joins and the rebalance it causes. The screenshot is kept as
 * {@code target/dashboard.png}. Skipped, saying so, where no chromium is installed (CI installs it).
 */
class DashboardBrowserTest {

  @TempDir
  Path dir;
  final List<AutoCloseable> closing = new ArrayList<>();

  @AfterEach
  void stop() throws Exception {
    for (int i = closing.size() - 1; i >= 0; i--) {
      closing.get(i).close();
    }
  }

  private <T extends AutoCloseable> T closes(T c) {
    closing.add(c);
    return c;
  }

  private Sharding pod(ShardManager manager, String version) {
    return closes(Sharding.builder().manager(manager.address().toString()).version(version)
        .register(Account.TYPE, Account.factory(null)).start());
  }

  @Test
  void showsThePodsTheirShardsAndTrafficAndUpdatesWhenAPodJoins() throws Exception {
    Optional<Path> chromium = Chromium.binary();
    assumeTrue(chromium.isPresent(), "chromium is not installed (apt-get install chromium); skipping the browser test");

    PrometheusMeterRegistry registry = Probes.registry();
    Dashboard dashboard = closes(new Dashboard());
    ManagerSettings settings = ManagerSettings.defaults().withNumberOfShards(60)
        .withLease(Duration.ofSeconds(3), Duration.ofSeconds(1));
    ShardManager manager = closes(ShardManager.start(settings, FileAssignmentStore.open(dir.resolve("manager")),
        PodHealth.LEASE_ONLY, "127.0.0.1", 0, Ticker.SYSTEM, new Random(),
        new BothObservers(new ManagerMetrics(registry), dashboard.observer())));
    HttpEndpoint http = closes(HttpEndpoint.start("127.0.0.1", 0,
        dashboard.routes(Probes.manager(manager, registry), manager)));
    Sharding a = pod(manager, "1.0");
    Sharding b = pod(manager, "1.0");

    // A client that sends deposits and reports its counters to the dashboard, as the demo's does.
    PrometheusMeterRegistry clientRegistry = Probes.registry();
    Sharding client = closes(Sharding.builder().manager(manager.address().toString()).clientOnly()
        .observer(new PodMetrics(clientRegistry)).start());
    closes(Reporter.start(http.address(), "client", clientRegistry));
    List<CompletableFuture<Void>> sent = new ArrayList<>();
    for (int i = 0; i < 500; i++) {
      sent.add(client.entity(Account.TYPE, "acct-" + (i % 50)).tell(new AccountMsg.Deposit(i, 1)).toCompletableFuture());
    }
    CompletableFuture.allOf(sent.toArray(new CompletableFuture<?>[0])).get(30, TimeUnit.SECONDS);

    Path profile = Files.createDirectories(dir.resolve("chromium-profile"));
    try (Chromium browser = new Chromium(chromium.get(), profile)) {
      browser.navigate("http://" + http.address() + "/");
      Awaitility.await("the page shows both pods").atMost(Duration.ofSeconds(30)).pollInterval(Duration.ofMillis(200))
          .until(() -> browser.number("document.querySelectorAll('#pods tr.pod').length") == 2);
      assertThat(browser.shows(a.podId().toString())).isTrue();
      assertThat(browser.shows(b.podId().toString())).isTrue();
      assertThat(browser.number("typeof Chart === 'function' ? 1 : 0")).as("Chart.js loaded from the manager").isEqualTo(1);
      assertThat(browser.number("document.getElementById('shard-map').height")).as("the shard picture is drawn")
          .isPositive();
      Awaitility.await("the page counts the reporting client").atMost(Duration.ofSeconds(20))
          .pollInterval(Duration.ofMillis(200))
          .until(() -> browser.number("Number(document.getElementById('reporters').textContent)") == 1);
      long updates = browser.number("Number(document.body.dataset.updates)");

      // A third pod joins; the same page, not reloaded, shows it and the rebalance.
      Sharding c = pod(manager, "1.0");
      Awaitility.await("the page shows the third pod").atMost(Duration.ofSeconds(30))
          .pollInterval(Duration.ofMillis(200))
          .until(() -> browser.number("document.querySelectorAll('#pods tr.pod').length") == 3);
      assertThat(browser.shows(c.podId().toString())).isTrue();
      Awaitility.await("the page shows the rebalance").atMost(Duration.ofSeconds(30))
          .pollInterval(Duration.ofMillis(200)).until(() -> browser.shows("rebalance round moved")
              && browser.shows("pod " + c.podId() + " joined (version 1.0)"));
      assertThat(browser.number("Number(document.body.dataset.updates)")).isGreaterThan(updates);
      Awaitility.await("shards spread over three pods").atMost(Duration.ofSeconds(30))
          .pollInterval(Duration.ofMillis(200))
          .until(() -> browser.number("[...document.querySelectorAll('#pods .pod-shards')]"
              + ".map(e => Number(e.textContent)).filter(n => n === 20).length") == 3);
      Awaitility.await("a traffic point").atMost(Duration.ofSeconds(20)).pollInterval(Duration.ofMillis(200))
          .until(() -> browser.number("Chart.getChart('traffic').data.labels.length") > 0);

      Path shot = Path.of("target", "dashboard.png");
      browser.screenshot(shot);
      byte[] png = Files.readAllBytes(shot);
      assertThat(png.length).isGreaterThan(10_000);
      assertThat(new String(png, 1, 3, java.nio.charset.StandardCharsets.US_ASCII)).isEqualTo("PNG");
    }
  }
}
