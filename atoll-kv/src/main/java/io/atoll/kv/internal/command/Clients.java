package io.atoll.kv.internal.command;

import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;

/** The connected clients, for CLIENT LIST and INFO. Thread-safe. */
public final class Clients {
  private final AtomicLong ids = new AtomicLong();
  private final Map<Long, Session> sessions = new ConcurrentHashMap<>();

  /** Registers a new connection's session. */
  public Session open(String addr, String laddr, long now) {
    return open(addr, laddr, now, false, true);
  }

  /**
   * Registers a new connection's session, over TLS or not, authenticated from the start (no
   * password is required) or not.
   */
  public Session open(String addr, String laddr, long now, boolean tls, boolean authenticated) {
    Session s = new Session(ids.incrementAndGet(), addr, laddr, now, tls, authenticated);
    sessions.put(s.id(), s);
    return s;
  }

  /** Forgets a closed connection. */
  public void close(Session s) {
    sessions.remove(s.id());
  }

  int count() {
    return sessions.size();
  }

  Iterable<Session> all() {
    return sessions.values();
  }
}
