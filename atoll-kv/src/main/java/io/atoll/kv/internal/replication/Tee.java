package io.atoll.kv.internal.replication;

import io.atoll.core.PodId;
import io.atoll.kv.internal.command.CommandLog;
import io.atoll.kv.internal.store.Entry;
import io.atoll.kv.internal.store.Key;
import io.atoll.kv.internal.store.SlotJournal;
import java.util.Collection;
import java.util.List;

/**
 * Sends every change both to the node's log (the append-only file, or nothing) and to its
 * replication {@link Backlog}: a store's journal and the dispatcher's log, each in one piece.
 */
public final class Tee {
  private Tee() {}

  /** A journal telling {@code log} first, then {@code backlog}. */
  public static SlotJournal journal(SlotJournal log, Backlog backlog) {
    return new SlotJournal() {
      @Override
      public void stored(int slot, Key key, Entry entry) {
        log.stored(slot, key, entry);
        backlog.stored(slot, key, entry);
      }

      @Override
      public void removed(int slot, Key key) {
        log.removed(slot, key);
        backlog.removed(slot, key);
      }

      @Override
      public void expiry(int slot, Key key, long at) {
        log.expiry(slot, key, at);
        backlog.expiry(slot, key, at);
      }

      @Override
      public void cleared(int slot) {
        log.cleared(slot);
        backlog.cleared(slot);
      }

      @Override
      public void imported(int slot, PodId source, long floor) {
        log.imported(slot, source, floor);
        backlog.imported(slot, source, floor);
      }

      @Override
      public void lent(int slot, long batch, Collection<Key> keys) {
        log.lent(slot, batch, keys);
        backlog.lent(slot, batch, keys);
      }

      @Override
      public void settled(int slot) {
        log.settled(slot);
        backlog.settled(slot);
      }

      @Override
      public void returned(int slot, PodId from, long batch) {
        log.returned(slot, from, batch);
        backlog.returned(slot, from, batch);
      }

      @Override
      public void marked(int slot, PodId migrating, PodId importing) {
        log.marked(slot, migrating, importing);
        backlog.marked(slot, migrating, importing);
      }
    };
  }

  /** {@code log}, with every command it logs also appended to {@code backlog}. */
  public static CommandLog log(CommandLog log, Backlog backlog) {
    return new CommandLog() {
      @Override
      public void command(byte[][] args) {
        log.command(args);
        backlog.command(args);
      }

      @Override
      public String writeError() {
        return log.writeError();
      }

      @Override
      public boolean loading() {
        return log.loading();
      }

      @Override
      public long position() {
        return log.position();
      }

      @Override
      public boolean awaitLogged(long position) {
        return log.awaitLogged(position);
      }

      @Override
      public boolean isLogged(long position) {
        return log.isLogged(position);
      }

      @Override
      public List<String> info() {
        return log.info();
      }

      @Override
      public String rewrite() {
        return log.rewrite();
      }

      @Override
      public String appendfsync() {
        return log.appendfsync();
      }
    };
  }
}
