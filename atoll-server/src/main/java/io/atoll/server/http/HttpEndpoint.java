package io.atoll.server.http;

import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A small HTTP server on the JDK's {@code com.sun.net.httpserver}: exact paths to handlers, GET
 * (and HEAD) for reading, POST only where a handler accepts it. Requests run on two daemon
 * threads; a request body is read up to {@link #MAX_BODY} bytes. Loopback unless told otherwise.
 */
public final class HttpEndpoint implements AutoCloseable {

  private static final Logger log = LoggerFactory.getLogger(HttpEndpoint.class);
  /** The largest request body accepted. */
  static final int MAX_BODY = 16 * 1024;

  /** What a handler answers. */
  public record Response(int status, String contentType, byte[] body) {
    /** A text response. */
    public static Response text(int status, String text) {
      return new Response(status, "text/plain; charset=utf-8", text.getBytes(StandardCharsets.UTF_8));
    }

    /** A JSON response. */
    public static Response json(String json) {
      return new Response(200, "application/json; charset=utf-8", json.getBytes(StandardCharsets.UTF_8));
    }
  }

  /** Handles one request: its method, its query (or null) and its body (empty for GET). */
  @FunctionalInterface
  public interface Handler {
    /** The response; a handler that does not serve this method answers 405. */
    Response handle(String method, String query, byte[] body);
  }

  /** Handlers by exact path. */
  public static final class Routes {
    private final Map<String, Handler> byPath = new LinkedHashMap<>();
    private Handler fallback;

    /** Serves GET (and HEAD) of {@code path} with {@code get}. */
    public Routes get(String path, java.util.function.Supplier<Response> get) {
      byPath.put(path, (m, q, b) -> m.equals("GET") || m.equals("HEAD") ? get.get() : notAllowed("GET"));
      return this;
    }

    /** Serves {@code path} with {@code handler}, for any method. */
    public Routes handle(String path, Handler handler) {
      byPath.put(path, handler);
      return this;
    }

    /** Serves paths with no exact route (static files); called with the path as the query. */
    public Routes fallback(Handler handler) {
      this.fallback = handler;
      return this;
    }
  }

  private final HttpServer server;
  private final ExecutorService threads;

  private HttpEndpoint(HttpServer server, ExecutorService threads) {
    this.server = server;
    this.threads = threads;
  }

  /**
   * Starts serving {@code routes} on {@code host:port} ({@code port} 0 picks a free one).
   *
   * @throws UncheckedIOException if the address cannot be bound, naming it
   */
  public static HttpEndpoint start(String host, int port, Routes routes) {
    Objects.requireNonNull(routes, "routes");
    if (port < 0 || port > 65535) {
      throw new IllegalArgumentException("http port: " + port + " (expected: 0..65535)");
    }
    HttpServer server;
    try {
      server = HttpServer.create(new InetSocketAddress(host, port), 64);
    } catch (IOException e) {
      throw new UncheckedIOException("cannot listen for HTTP on " + host + ":" + port + ": " + e.getMessage(), e);
    }
    ExecutorService threads = Executors.newFixedThreadPool(2, r -> {
      Thread t = new Thread(r, "atoll-http");
      t.setDaemon(true);
      return t;
    });
    server.setExecutor(threads);
    server.createContext("/", ex -> serve(ex, routes));
    server.start();
    return new HttpEndpoint(server, threads);
  }

  static Response notAllowed(String allowed) {
    return Response.text(405, "method not allowed (expected: " + allowed + ")\n");
  }

  private static void serve(HttpExchange ex, Routes routes) {
    try (ex) {
      String method = ex.getRequestMethod();
      String path = ex.getRequestURI().getPath();
      Handler h = routes.byPath.get(path);
      Response r;
      try {
        byte[] body = readBody(ex.getRequestBody());
        if (body == null) {
          r = Response.text(413, "request body too large (expected: <= " + MAX_BODY + " bytes)\n");
        } else if (h != null) {
          r = h.handle(method, ex.getRequestURI().getRawQuery(), body);
        } else if (routes.fallback != null && (method.equals("GET") || method.equals("HEAD"))) {
          r = routes.fallback.handle(method, path, body);
        } else {
          r = Response.text(404, "no such path: " + path + "\n");
        }
      } catch (RuntimeException e) {
        log.warn("http {} {} failed: {}", method, path, e.toString());
        r = Response.text(500, "internal error: " + e.getMessage() + "\n");
      }
      ex.getResponseHeaders().set("Content-Type", r.contentType());
      ex.getResponseHeaders().set("Cache-Control", "no-store");
      if (method.equals("HEAD")) {
        ex.sendResponseHeaders(r.status(), -1);
      } else {
        ex.sendResponseHeaders(r.status(), r.body().length == 0 ? -1 : r.body().length);
        ex.getResponseBody().write(r.body());
      }
    } catch (IOException e) {
      // the client went away
    }
  }

  /** The body, or null if it is longer than {@link #MAX_BODY}. */
  private static byte[] readBody(InputStream in) throws IOException {
    byte[] b = in.readNBytes(MAX_BODY + 1);
    return b.length > MAX_BODY ? null : b;
  }

  /** The port it listens on. */
  public int port() {
    return server.getAddress().getPort();
  }

  /** The address it listens on, as {@code host:port}. */
  public String address() {
    return server.getAddress().getHostString() + ":" + port();
  }

  /** Stops at once. */
  @Override
  public void close() {
    server.stop(0);
    threads.shutdownNow();
    try {
      threads.awaitTermination(1, TimeUnit.SECONDS);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }
}
