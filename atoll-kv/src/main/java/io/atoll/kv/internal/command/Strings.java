package io.atoll.kv.internal.command;

import io.atoll.kv.internal.resp.Numbers;
import io.atoll.kv.internal.store.Entry;
import io.atoll.kv.internal.store.Key;
import io.atoll.kv.internal.store.Slot;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

/** The string commands. Each runs holding its slot's lock (the dispatcher takes it). */
final class Strings {
  /** Redis' limit on a string built by SETRANGE or APPEND. */
  private final long maxString;
  private final Stats stats;

  Strings(long maxString, Stats stats) {
    this.maxString = maxString;
    this.stats = stats;
  }

  void register(CommandTable.Builder b) {
    b.add("get", 2, "readonly fast", 1, 1, 1, this::get)
        .add("set", -3, "write denyoom", 1, 1, 1, this::set)
        .add("setnx", 3, "write denyoom fast", 1, 1, 1, c -> c.reply.integer(setIfAbsent(c)))
        .add("setex", 4, "write denyoom", 1, 1, 1, c -> setWithTtl(c, 1000))
        .add("psetex", 4, "write denyoom", 1, 1, 1, c -> setWithTtl(c, 1))
        .add("getdel", 2, "write fast", 1, 1, 1, this::getdel)
        .add("getex", -2, "write fast", 1, 1, 1, this::getex)
        .add("getset", 3, "write denyoom fast", 1, 1, 1, this::getset)
        .add("incr", 2, "write denyoom fast", 1, 1, 1, c -> incrBy(c, 1))
        .add("decr", 2, "write denyoom fast", 1, 1, 1, c -> incrBy(c, -1))
        .add("incrby", 3, "write denyoom fast", 1, 1, 1, c -> incrBy(c, c.integer(2)))
        .add("decrby", 3, "write denyoom fast", 1, 1, 1, c -> {
          long d = c.integer(2);
          if (d == Long.MIN_VALUE) {
            throw new CommandError("ERR decrement would overflow");
          }
          incrBy(c, -d);
        })
        .add("incrbyfloat", 3, "write denyoom fast", 1, 1, 1, this::incrByFloat)
        .add("append", 3, "write denyoom fast", 1, 1, 1, this::append)
        .add("strlen", 2, "readonly fast", 1, 1, 1, c -> {
          byte[] v = string(c, c.key(1));
          c.reply.integer(v == null ? 0 : v.length);
        })
        .add("getrange", 4, "readonly", 1, 1, 1, this::getrange)
        .add("substr", 4, "readonly", 1, 1, 1, this::getrange)
        .add("setrange", 4, "write denyoom", 1, 1, 1, this::setrange)
        .add("mget", -2, "readonly fast", 1, -1, 1, this::mget)
        .add("mset", -3, "write denyoom", 1, -1, 2, this::mset)
        .add("msetnx", -3, "write denyoom", 1, -1, 2, this::msetnx);
  }

  /** The live string at {@code key}, or null; WRONGTYPE for a hash. */
  private byte[] string(Call c, Key key) {
    Entry e = c.slot.get(key, c.now);
    if (e == null) {
      return null;
    }
    if (!e.isString()) {
      throw new CommandError(CommandError.WRONGTYPE);
    }
    return e.string();
  }

  private void get(Call c) {
    byte[] v = string(c, c.key(1));
    (v == null ? stats.misses : stats.hits).increment();
    c.reply.bulk(v);
  }

  private void set(Call c) {
    boolean nx = false;
    boolean xx = false;
    boolean get = false;
    boolean keepTtl = false;
    long expireAt = 0;
    String unit = null;
    for (int i = 3; i < c.argc(); i++) {
      String o = c.opt(i);
      switch (o) {
        case "NX" -> nx = true;
        case "XX" -> xx = true;
        case "GET" -> get = true;
        case "KEEPTTL" -> keepTtl = true;
        case "EX", "PX", "EXAT", "PXAT" -> {
          if ((unit != null && !unit.equals(o)) || i + 1 >= c.argc()) { // Redis lets the same one repeat
            throw new CommandError(CommandError.SYNTAX);
          }
          unit = o;
          expireAt = expiry(c, o, ++i, "set");
        }
        default -> throw new CommandError(CommandError.SYNTAX);
      }
    }
    if ((nx && xx) || (keepTtl && unit != null)) {
      throw new CommandError(CommandError.SYNTAX);
    }
    Key key = c.key(1);
    Entry old = c.slot.get(key, c.now);
    if (get && old != null && !old.isString()) {
      throw new CommandError(CommandError.WRONGTYPE);
    }
    byte[] previous = old == null ? null : old.string();
    if ((nx && old != null) || (xx && old == null)) {
      if (get) {
        c.reply.bulk(previous);
      } else {
        c.reply.nil();
      }
      return;
    }
    Entry e = new Entry(c.arg(2));
    e.expireAt = keepTtl && old != null ? old.expireAt : expireAt;
    c.slot.put(key, e);
    if (get) {
      c.reply.bulk(previous);
    } else {
      c.reply.ok();
    }
  }

  /** The absolute expiry (epoch ms) of an EX/PX/EXAT/PXAT argument; Redis' errors. */
  static long expiry(Call c, String unit, int i, String command) {
    long v = c.integer(i);
    String invalid = "ERR invalid expire time in '" + command + "' command";
    if (v <= 0) {
      throw new CommandError(invalid);
    }
    long at;
    try {
      at = switch (unit) {
        case "EX" -> Math.addExact(c.now, Math.multiplyExact(v, 1000L));
        case "PX" -> Math.addExact(c.now, v);
        case "EXAT" -> Math.multiplyExact(v, 1000L);
        default -> v;
      };
    } catch (ArithmeticException e) {
      throw new CommandError(invalid);
    }
    return at;
  }

  private int setIfAbsent(Call c) {
    Key key = c.key(1);
    if (c.slot.get(key, c.now) != null) {
      return 0;
    }
    c.slot.put(key, new Entry(c.arg(2)));
    return 1;
  }

  private void setWithTtl(Call c, long unitMillis) {
    long v = c.integer(2);
    String cmd = unitMillis == 1000 ? "setex" : "psetex";
    if (v <= 0) {
      throw new CommandError("ERR invalid expire time in '" + cmd + "' command");
    }
    Entry e = new Entry(c.arg(3));
    try {
      e.expireAt = Math.addExact(c.now, Math.multiplyExact(v, unitMillis));
    } catch (ArithmeticException ex) {
      throw new CommandError("ERR invalid expire time in '" + cmd + "' command");
    }
    c.slot.put(c.key(1), e);
    c.reply.ok();
  }

  private void getdel(Call c) {
    Key key = c.key(1);
    byte[] v = string(c, key);
    if (v != null) {
      c.slot.remove(key);
    }
    c.reply.bulk(v);
  }

  private void getex(Call c) {
    Key key = c.key(1);
    String unit = null;
    int unitArg = -1;
    boolean persist = false;
    for (int i = 2; i < c.argc(); i++) {
      String o = c.opt(i);
      if (o.equals("PERSIST") && unit == null) {
        persist = true;
      } else if ((o.equals("EX") || o.equals("PX") || o.equals("EXAT") || o.equals("PXAT"))
          && (unit == null || unit.equals(o)) && !persist && i + 1 < c.argc()) {
        unit = o;
        unitArg = ++i;
      } else {
        throw new CommandError(CommandError.SYNTAX);
      }
    }
    byte[] v = string(c, key); // as Redis: a missing key is nil, a hash WRONGTYPE, before the time is checked
    long at = v != null && unit != null ? expiry(c, unit, unitArg, "getex") : -1;
    if (v != null) {
      Entry e = c.slot.get(key, c.now);
      if (persist) {
        if (e.expireAt != 0) {
          c.slot.expire(key, e, 0); // as Redis: only a TTL removed is a change
        }
      } else if (at >= 0) {
        if (at <= c.now) {
          c.slot.remove(key);
        } else {
          c.slot.expire(key, e, at);
        }
      }
    }
    c.reply.bulk(v);
  }

  private void getset(Call c) {
    Key key = c.key(1);
    byte[] v = string(c, key);
    c.slot.put(key, new Entry(c.arg(2)));
    c.reply.bulk(v);
  }

  private void incrBy(Call c, long delta) {
    Key key = c.key(1);
    Entry e = c.slot.get(key, c.now);
    long current = 0;
    if (e != null) {
      if (!e.isString()) {
        throw new CommandError(CommandError.WRONGTYPE);
      }
      Long v = Numbers.parseLong(e.string());
      if (v == null) {
        throw new CommandError(CommandError.NOT_INTEGER);
      }
      current = v;
    }
    long next;
    try {
      next = Math.addExact(current, delta);
    } catch (ArithmeticException ex) {
      throw new CommandError("ERR increment or decrement would overflow");
    }
    replaceValue(c, key, e, Numbers.bytes(next));
    c.reply.integer(next);
  }

  private void incrByFloat(Call c) {
    Key key = c.key(1);
    double delta = c.dbl(2);
    Entry e = c.slot.get(key, c.now);
    double current = 0;
    if (e != null) {
      if (!e.isString()) {
        throw new CommandError(CommandError.WRONGTYPE);
      }
      Double v = Numbers.parseDouble(e.string());
      if (v == null) {
        throw new CommandError(CommandError.NOT_FLOAT);
      }
      current = v;
    }
    String sum = Double.isInfinite(current) || Double.isInfinite(delta) ? null
        : Numbers.addFloats(e == null ? null : e.string(), current, c.arg(2), delta);
    if (sum == null) {
      throw new CommandError("ERR increment would produce NaN or Infinity");
    }
    byte[] text = sum.getBytes(java.nio.charset.StandardCharsets.US_ASCII);
    replaceValue(c, key, e, text);
    c.reply.bulk(text);
  }

  /** Stores a new string value under {@code key}, keeping the old entry's expiry. */
  private static void replaceValue(Call c, Key key, Entry old, byte[] value) {
    Entry e = new Entry(value);
    e.expireAt = old == null ? 0 : old.expireAt;
    c.slot.put(key, e);
  }

  private void append(Call c) {
    Key key = c.key(1);
    Entry e = c.slot.get(key, c.now);
    byte[] add = c.arg(2);
    byte[] v;
    if (e == null) {
      v = add;
    } else {
      if (!e.isString()) {
        throw new CommandError(CommandError.WRONGTYPE);
      }
      byte[] old = e.string();
      checkSize(old.length, add.length);
      v = Arrays.copyOf(old, old.length + add.length);
      System.arraycopy(add, 0, v, old.length, add.length);
    }
    replaceValue(c, key, e, v);
    c.reply.integer(v.length);
  }

  /** Refuses a string of {@code offset + length} bytes beyond the limit (no overflow for huge offsets). */
  private void checkSize(long offset, long length) {
    if (offset > maxString || length > maxString - offset) {
      throw new CommandError("ERR string exceeds maximum allowed size (proto-max-bulk-len)");
    }
  }

  private void getrange(Call c) {
    long start = c.integer(2);
    long end = c.integer(3);
    byte[] v = string(c, c.key(1));
    if (v == null || (start < 0 && end < 0 && start > end)) {
      c.reply.bulk(new byte[0]);
      return;
    }
    long n = v.length;
    if (start < 0) {
      start = n + start;
    }
    if (end < 0) {
      end = n + end;
    }
    start = Math.max(0, start);
    end = Math.max(0, end);
    end = Math.min(end, n - 1);
    if (start > end || n == 0) {
      c.reply.bulk(new byte[0]);
      return;
    }
    c.reply.bulk(Arrays.copyOfRange(v, (int) start, (int) end + 1));
  }

  private void setrange(Call c) {
    Key key = c.key(1);
    long offset = c.integer(2);
    if (offset < 0) {
      throw new CommandError("ERR offset is out of range");
    }
    byte[] add = c.arg(3);
    Entry e = c.slot.get(key, c.now);
    byte[] old = new byte[0];
    if (e != null) {
      if (!e.isString()) {
        throw new CommandError(CommandError.WRONGTYPE);
      }
      old = e.string();
    }
    if (add.length == 0) {
      c.reply.integer(old.length);
      return;
    }
    checkSize(offset, add.length);
    byte[] v = Arrays.copyOf(old, (int) Math.max(old.length, offset + add.length));
    System.arraycopy(add, 0, v, (int) offset, add.length);
    replaceValue(c, key, e, v);
    c.reply.integer(v.length);
  }

  private void mget(Call c) {
    List<byte[]> values = new ArrayList<>(c.argc() - 1);
    for (int i = 1; i < c.argc(); i++) {
      Entry e = c.slot.get(c.key(i), c.now);
      values.add(e != null && e.isString() ? e.string() : null);
    }
    c.reply.bulks(values);
  }

  private static void checkPairs(Call c) {
    if ((c.argc() - 1) % 2 != 0) {
      throw new CommandError("ERR wrong number of arguments for '" + c.str(0).toLowerCase(java.util.Locale.ROOT)
          + "' command");
    }
  }

  private void mset(Call c) {
    checkPairs(c);
    Slot slot = c.slot;
    for (int i = 1; i < c.argc(); i += 2) {
      slot.put(c.key(i), new Entry(c.arg(i + 1)));
    }
    c.reply.ok();
  }

  private void msetnx(Call c) {
    checkPairs(c);
    for (int i = 1; i < c.argc(); i += 2) {
      if (c.slot.get(c.key(i), c.now) != null) {
        c.reply.integer(0);
        return;
      }
    }
    for (int i = 1; i < c.argc(); i += 2) {
      c.slot.put(c.key(i), new Entry(c.arg(i + 1)));
    }
    c.reply.integer(1);
  }
}
