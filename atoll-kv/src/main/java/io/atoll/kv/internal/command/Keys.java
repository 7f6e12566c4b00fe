package io.atoll.kv.internal.command;

import io.atoll.kv.internal.cluster.Dump;
import io.atoll.kv.internal.store.Entry;
import io.atoll.kv.internal.store.Key;

/** The generic key commands: DEL, EXISTS, TTL and expiry, TYPE, DUMP and RESTORE. */
final class Keys {

  void register(CommandTable.Builder b) {
    b.add("del", -2, "write", 1, -1, 1, this::del)
        .add("unlink", -2, "write fast", 1, -1, 1, this::del)
        .add("exists", -2, "readonly fast", 1, -1, 1, this::exists)
        .add("touch", -2, "readonly fast", 1, -1, 1, this::exists)
        .add("expire", -3, "write fast", 1, 1, 1, c -> expire(c, 1000, false))
        .add("pexpire", -3, "write fast", 1, 1, 1, c -> expire(c, 1, false))
        .add("expireat", -3, "write fast", 1, 1, 1, c -> expire(c, 1000, true))
        .add("pexpireat", -3, "write fast", 1, 1, 1, c -> expire(c, 1, true))
        .add("ttl", 2, "readonly fast", 1, 1, 1, c -> ttl(c, 1000))
        .add("pttl", 2, "readonly fast", 1, 1, 1, c -> ttl(c, 1))
        .add("expiretime", 2, "readonly fast", 1, 1, 1, c -> expireTime(c, 1000))
        .add("pexpiretime", 2, "readonly fast", 1, 1, 1, c -> expireTime(c, 1))
        .add("persist", 2, "write fast", 1, 1, 1, this::persist)
        .add("type", 2, "readonly fast", 1, 1, 1, c -> {
          Entry e = c.slot.get(c.key(1), c.now);
          c.reply.simple(e == null ? "none" : e.typeName());
        })
        .add("dump", 2, "readonly", 1, 1, 1, c -> {
          Entry e = c.slot.get(c.key(1), c.now);
          c.reply.bulk(e == null ? null : Dump.dump(e));
        })
        .add("restore", -4, "write denyoom", 1, 1, 1, this::restore)
        .add("restore-asking", -4, "write denyoom asking", 1, 1, 1, this::restoreAsking);
  }

  private void del(Call c) {
    int n = 0;
    for (int i = 1; i < c.argc(); i++) {
      Key k = c.key(i);
      if (c.slot.get(k, c.now) != null) {
        c.slot.remove(k);
        n++;
      }
    }
    c.reply.integer(n);
  }

  private void exists(Call c) {
    int n = 0;
    for (int i = 1; i < c.argc(); i++) {
      if (c.slot.get(c.key(i), c.now) != null) {
        n++;
      }
    }
    c.reply.integer(n);
  }

  private void expire(Call c, long unit, boolean absolute) {
    long v = c.integer(2);
    boolean nx = false;
    boolean xx = false;
    boolean gt = false;
    boolean lt = false;
    for (int i = 3; i < c.argc(); i++) {
      switch (c.opt(i)) {
        case "NX" -> nx = true;
        case "XX" -> xx = true;
        case "GT" -> gt = true;
        case "LT" -> lt = true;
        default -> throw new CommandError("ERR Unsupported option " + c.str(i));
      }
    }
    if (nx && (xx || gt || lt)) {
      throw new CommandError("ERR NX and XX, GT or LT options at the same time are not compatible");
    }
    if (gt && lt) {
      throw new CommandError("ERR GT and LT options at the same time are not compatible");
    }
    long at;
    try {
      at = absolute ? Math.multiplyExact(v, unit) : Math.addExact(c.now, Math.multiplyExact(v, unit));
    } catch (ArithmeticException e) {
      throw new CommandError("ERR invalid expire time in '" + c.str(0).toLowerCase(java.util.Locale.ROOT) + "' command");
    }
    Key key = c.key(1);
    Entry e = c.slot.get(key, c.now);
    if (e == null) {
      c.reply.integer(0);
      return;
    }
    long current = e.expireAt == 0 ? Long.MAX_VALUE : e.expireAt; // no TTL counts as infinite
    if ((nx && e.expireAt != 0) || (xx && e.expireAt == 0) || (gt && at <= current) || (lt && at >= current)) {
      c.reply.integer(0);
      return;
    }
    if (at <= c.now) {
      c.slot.remove(key);
    } else {
      c.slot.expire(key, e, at);
    }
    c.reply.integer(1);
  }

  private void ttl(Call c, long unit) {
    Entry e = c.slot.get(c.key(1), c.now);
    if (e == null) {
      c.reply.integer(-2);
    } else if (e.expireAt == 0) {
      c.reply.integer(-1);
    } else {
      long ms = e.expireAt - c.now;
      c.reply.integer(unit == 1 ? ms : (ms + 500) / 1000);
    }
  }

  private void expireTime(Call c, long unit) {
    Entry e = c.slot.get(c.key(1), c.now);
    c.reply.integer(e == null ? -2 : e.expireAt == 0 ? -1 : e.expireAt / unit);
  }

  private void persist(Call c) {
    Key key = c.key(1);
    Entry e = c.slot.get(key, c.now);
    if (e == null || e.expireAt == 0) {
      c.reply.integer(0);
      return;
    }
    c.slot.expire(key, e, 0);
    c.reply.integer(1);
  }

  /**
   * RESTORE-ASKING: as RESTORE, only while the connection's hand-off attempt is the slot's current
   * one. A newer attempt or a return fenced it (its source gave up on this batch and holds the
   * keys), so a restore arriving late stores nothing. A connection without a token (a source that
   * predates tokens; its ATOLL-IMPORTING set the slot's token to 0) is checked too: it stores while
   * no tokened attempt came since, so its late restores are fenced by any newer one.
   */
  private void restoreAsking(Call c) {
    long token = c.session.handOffToken;
    if (c.slot.handOffToken() != token) {
      throw new CommandError("ERR restore of hand-off attempt " + (token == 0 ? "without a token" : Long
          .toUnsignedString(token)) + " refused: slot " + c.slot.id() + " is fenced by " + (c.slot.handOffToken() == 0
          ? "no attempt (a return, or the import ended)" : "attempt " + Long.toUnsignedString(c.slot.handOffToken()))
          + "; nothing stored (expected: a restore of the slot's current hand-off attempt)");
    }
    restore(c);
  }

  /**
   * Whether {@code args} are a RESTORE (or RESTORE-ASKING) whose absolute time is already past: it
   * only deletes the key (a hand-off sends one for a held key gone at its source), so memory
   * pressure must not refuse it, or held keys would stay held while the target is full.
   */
  static boolean restoreOnlyDeletes(String command, byte[][] args, long now) {
    if (!command.equals("restore") && !command.equals("restore-asking") || args.length < 5) {
      return false;
    }
    boolean absolute = false;
    for (int i = 4; i < args.length; i++) {
      if (new String(args[i], java.nio.charset.StandardCharsets.US_ASCII).equalsIgnoreCase("ABSTTL")) {
        absolute = true;
      }
    }
    Long at = io.atoll.kv.internal.resp.Numbers.parseLong(args[2]);
    return absolute && at != null && at > 0 && at <= now;
  }

  private void restore(Call c) {
    long ttl = c.integer(2);
    boolean replace = false;
    boolean absolute = false;
    for (int i = 4; i < c.argc(); i++) {
      switch (c.opt(i)) {
        case "REPLACE" -> replace = true;
        case "ABSTTL" -> absolute = true;
        case "IDLETIME", "FREQ" -> i++;
        default -> throw new CommandError(CommandError.SYNTAX);
      }
    }
    if (ttl < 0) {
      throw new CommandError("ERR Invalid TTL value, must be >= 0");
    }
    Key key = c.key(1);
    if (!replace && c.slot.get(key, c.now) != null) {
      throw new CommandError("BUSYKEY Target key name already exists.");
    }
    Entry e = Dump.restore(c.arg(3));
    if (e == null) {
      throw new CommandError("ERR DUMP payload version or checksum are wrong");
    }
    long at = ttl == 0 ? 0 : absolute ? ttl : c.now + ttl;
    if (at != 0 && at <= c.now) {
      c.slot.remove(key); // already expired: Redis deletes and answers OK
      c.reply.ok();
      return;
    }
    e.expireAt = at;
    c.slot.put(key, e);
    c.reply.ok();
  }
}
