package io.atoll.server.chaos;

import io.atoll.server.demo.AccountDb;
import io.atoll.server.demo.ActivationLog;
import java.util.ArrayList;
import java.util.List;

/**
 * When each pod's process was frozen (SIGSTOP to SIGCONT), in the activation log's time, by the
 * address the pod announces: what {@link ActivationLog} needs to excuse a frozen process finishing
 * its handler. Thread-safe.
 */
final class FreezeLog implements ActivationLog.Freezes {

  private record Freeze(String address, long from, long to) {}

  private final List<Freeze> freezes = new ArrayList<>();

  /** Records that the pod announcing {@code address} was frozen from {@code fromMicros} until now. */
  synchronized void frozen(String address, long fromMicros) {
    freezes.add(new Freeze(address, fromMicros, AccountDb.nowMicros()));
  }

  @Override
  public synchronized boolean frozenDuring(String pod, long fromMicros, long toMicros) {
    int hash = pod.indexOf('#');
    String address = hash < 0 ? pod : pod.substring(0, hash);
    for (Freeze f : freezes) {
      if (f.address().equals(address) && f.from() < toMicros && f.to() > fromMicros) {
        return true;
      }
    }
    return false;
  }
}
