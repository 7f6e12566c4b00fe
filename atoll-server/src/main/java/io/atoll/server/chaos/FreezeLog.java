package io.atoll.server.chaos;

import io.atoll.server.demo.ActivationLog;
import java.util.ArrayList;
import java.util.List;
import java.util.OptionalLong;

/**
 * When each pod's process was frozen (SIGSTOP to SIGCONT), in the activation log's time, by the
 * address the pod announces: what {@link ActivationLog} needs to excuse a handler that started late
 * because its process was frozen between its lease check and the handler's first line.
 * Thread-safe. Public for the process tests that freeze pods; not API.
 */
public final class FreezeLog implements ActivationLog.Freezes {

  private record Freeze(String address, long from, long to) {}

  private final List<Freeze> freezes = new ArrayList<>();

  /** An empty log. */
  public FreezeLog() {}

  /** Records that the pod announcing {@code address} was frozen from {@code fromMicros} to {@code toMicros}. */
  public synchronized void frozen(String address, long fromMicros, long toMicros) {
    freezes.add(new Freeze(address, fromMicros, toMicros));
  }

  @Override
  public synchronized OptionalLong thawed(String pod, long frozenBefore, long thawedBy) {
    int hash = pod.indexOf('#');
    String address = hash < 0 ? pod : pod.substring(0, hash);
    long last = Long.MIN_VALUE;
    for (Freeze f : freezes) {
      if (f.address().equals(address) && f.from() < frozenBefore && f.to() <= thawedBy && f.to() > last) {
        last = f.to();
      }
    }
    return last == Long.MIN_VALUE ? OptionalLong.empty() : OptionalLong.of(last);
  }
}
