package io.atoll.server.http;

import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.net.http.WebSocket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Base64;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.awaitility.Awaitility;

/**
 * A headless Chromium driven over the DevTools protocol (a WebSocket, the JDK's client): navigate,
 * evaluate an expression, take a screenshot. For the dashboard's browser test.
 */
final class Chromium implements AutoCloseable {

  private static final Pattern ID = Pattern.compile("^\\{\"id\":(\\d+)");
  private static final Pattern WS = Pattern.compile("\"webSocketDebuggerUrl\":\\s*\"(ws://[^\"]+/page/[^\"]+)\"");

  private final Process process;
  private final WebSocket socket;
  private final AtomicInteger ids = new AtomicInteger();
  private final Map<Integer, CompletableFuture<String>> waiting = new ConcurrentHashMap<>();

  /** The chromium binary on the PATH, if any. */
  static Optional<Path> binary() {
    for (String name : List.of("chromium", "chromium-browser", "google-chrome")) {
      for (String dir : System.getenv().getOrDefault("PATH", "").split(":")) {
        Path p = Path.of(dir, name);
        if (Files.isExecutable(p)) {
          return Optional.of(p);
        }
      }
    }
    return Optional.empty();
  }

  Chromium(Path binary, Path profile) throws Exception {
    List<String> cmd = new ArrayList<>(List.of(binary.toString(), "--headless=new", "--no-sandbox", "--disable-gpu",
        "--disable-dev-shm-usage", "--no-first-run", "--no-default-browser-check", "--disable-extensions",
        // Nothing but loopback: no background services, updates, pings, or name resolution.
        "--disable-background-networking", "--disable-component-update", "--disable-sync", "--disable-default-apps",
        "--no-pings", "--disable-domain-reliability", "--metrics-recording-only",
        "--host-resolver-rules=MAP * ~NOTFOUND, EXCLUDE 127.0.0.1",
        "--remote-debugging-address=127.0.0.1", "--remote-debugging-port=0", "--user-data-dir=" + profile,
        "--window-size=1280,1000", "about:blank"));
    process = new ProcessBuilder(cmd).redirectErrorStream(true).redirectOutput(profile.resolveSibling("chromium.log")
        .toFile()).start();
    Path portFile = profile.resolve("DevToolsActivePort");
    Awaitility.await("chromium's DevToolsActivePort").atMost(Duration.ofSeconds(30))
        .until(() -> Files.exists(portFile) && Files.readAllLines(portFile).size() >= 1);
    int port = Integer.parseInt(Files.readAllLines(portFile).get(0).trim());
    HttpClient http = HttpClient.newHttpClient();
    String list = http.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + "/json/list")).build(),
        HttpResponse.BodyHandlers.ofString()).body();
    String page = null;
    for (String entry : list.split("\\}\\s*,\\s*\\{")) {
      Matcher m = WS.matcher(entry);
      if (entry.matches("(?s).*\"type\":\\s*\"page\".*") && m.find()) {
        page = m.group(1);
        break;
      }
    }
    if (page == null) {
      throw new IOException("chromium lists no page: " + list);
    }
    socket = http.newWebSocketBuilder().buildAsync(URI.create(page), new WebSocket.Listener() {
      final StringBuilder partial = new StringBuilder();

      @Override
      public CompletionStage<?> onText(WebSocket ws, CharSequence data, boolean last) {
        partial.append(data);
        if (last) {
          String msg = partial.toString();
          partial.setLength(0);
          Matcher id = ID.matcher(msg);
          if (id.find()) {
            CompletableFuture<String> f = waiting.remove(Integer.parseInt(id.group(1)));
            if (f != null) {
              f.complete(msg);
            }
          }
        }
        ws.request(1);
        return null;
      }
    }).get(10, TimeUnit.SECONDS);
  }

  /** Sends a DevTools command and waits for its answer (the raw JSON). */
  String call(String method, String paramsJson) throws Exception {
    int id = ids.incrementAndGet();
    CompletableFuture<String> f = new CompletableFuture<>();
    waiting.put(id, f);
    socket.sendText("{\"id\":" + id + ",\"method\":\"" + method + "\",\"params\":" + paramsJson + "}", true)
        .get(10, TimeUnit.SECONDS);
    String answer = f.get(30, TimeUnit.SECONDS);
    if (answer.contains("\"error\":")) {
      throw new IOException(method + " failed: " + answer);
    }
    return answer;
  }

  void navigate(String url) throws Exception {
    call("Page.navigate", "{\"url\":\"" + url + "\"}");
  }

  /** Evaluates a JavaScript expression with a numeric value in the page. */
  long number(String expression) throws Exception {
    String answer = call("Runtime.evaluate", "{\"expression\":" + quote(expression) + ",\"returnByValue\":true}");
    Matcher m = Pattern.compile("\"value\":(-?\\d+)").matcher(answer);
    if (!m.find()) {
      throw new IOException("not a number: " + expression + " -> " + answer);
    }
    return Long.parseLong(m.group(1));
  }

  /** Whether the page's visible text contains {@code text}. */
  boolean shows(String text) throws Exception {
    return number("document.body.innerText.includes(" + quote(text) + ") ? 1 : 0") == 1;
  }

  /** Saves a PNG screenshot of the page to {@code file}. */
  void screenshot(Path file) throws Exception {
    String answer = call("Page.captureScreenshot", "{\"format\":\"png\"}");
    Matcher m = Pattern.compile("\"data\":\"([A-Za-z0-9+/=]+)\"").matcher(answer);
    if (!m.find()) {
      throw new IOException("no screenshot data: " + answer.substring(0, Math.min(200, answer.length())));
    }
    Files.createDirectories(file.getParent());
    Files.write(file, Base64.getDecoder().decode(m.group(1)));
  }

  private static String quote(String s) {
    return "\"" + s.replace("\\", "\\\\").replace("\"", "\\\"") + "\"";
  }

  @Override
  public void close() {
    try {
      socket.abort();
    } finally {
      process.descendants().forEach(ProcessHandle::destroy);
      process.destroy();
      try {
        if (!process.waitFor(5, TimeUnit.SECONDS)) {
          process.destroyForcibly().waitFor(5, TimeUnit.SECONDS);
        }
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        process.destroyForcibly();
      }
    }
  }
}
