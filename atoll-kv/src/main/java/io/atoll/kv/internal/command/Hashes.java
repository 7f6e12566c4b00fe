package io.atoll.kv.internal.command;

import io.atoll.kv.internal.resp.Numbers;
import io.atoll.kv.internal.store.Entry;
import io.atoll.kv.internal.store.Key;
import java.util.HashMap;
import java.util.Map;

/** The hash commands. */
final class Hashes {

  void register(CommandTable.Builder b) {
    b.add("hset", -4, "write denyoom fast", 1, 1, 1, c -> c.reply.integer(hset(c, false)))
        .add("hmset", -4, "write denyoom fast", 1, 1, 1, c -> {
          hset(c, false);
          c.reply.ok();
        })
        .add("hsetnx", 4, "write denyoom fast", 1, 1, 1, c -> c.reply.integer(hset(c, true)))
        .add("hget", 3, "readonly fast", 1, 1, 1, c -> {
          HashMap<Key, byte[]> h = hash(c, false);
          c.reply.bulk(h == null ? null : h.get(c.key(2)));
        })
        .add("hmget", -3, "readonly fast", 1, 1, 1, c -> {
          HashMap<Key, byte[]> h = hash(c, false);
          c.reply.array(c.argc() - 2);
          for (int i = 2; i < c.argc(); i++) {
            c.reply.bulk(h == null ? null : h.get(c.key(i)));
          }
        })
        .add("hdel", -3, "write fast", 1, 1, 1, this::hdel)
        .add("hlen", 2, "readonly fast", 1, 1, 1, c -> {
          HashMap<Key, byte[]> h = hash(c, false);
          c.reply.integer(h == null ? 0 : h.size());
        })
        .add("hstrlen", 3, "readonly fast", 1, 1, 1, c -> {
          HashMap<Key, byte[]> h = hash(c, false);
          byte[] v = h == null ? null : h.get(c.key(2));
          c.reply.integer(v == null ? 0 : v.length);
        })
        .add("hexists", 3, "readonly fast", 1, 1, 1, c -> {
          HashMap<Key, byte[]> h = hash(c, false);
          c.reply.integer(h != null && h.containsKey(c.key(2)) ? 1 : 0);
        })
        .add("hgetall", 2, "readonly", 1, 1, 1, c -> {
          HashMap<Key, byte[]> h = hash(c, false);
          c.reply.map(h == null ? 0 : h.size());
          if (h != null) {
            for (Map.Entry<Key, byte[]> e : h.entrySet()) {
              c.reply.bulk(e.getKey().bytes());
              c.reply.bulk(e.getValue());
            }
          }
        })
        .add("hkeys", 2, "readonly", 1, 1, 1, c -> {
          HashMap<Key, byte[]> h = hash(c, false);
          c.reply.array(h == null ? 0 : h.size());
          if (h != null) {
            h.keySet().forEach(k -> c.reply.bulk(k.bytes()));
          }
        })
        .add("hvals", 2, "readonly", 1, 1, 1, c -> {
          HashMap<Key, byte[]> h = hash(c, false);
          c.reply.array(h == null ? 0 : h.size());
          if (h != null) {
            h.values().forEach(c.reply::bulk);
          }
        })
        .add("hincrby", 4, "write denyoom fast", 1, 1, 1, this::hincrby)
        .add("hincrbyfloat", 4, "write denyoom fast", 1, 1, 1, this::hincrbyfloat);
  }

  /** The hash at the call's key; created (and stored) if {@code create} and absent. WRONGTYPE if not a hash. */
  private static HashMap<Key, byte[]> hash(Call c, boolean create) {
    Key key = c.key(1);
    Entry e = c.slot.get(key, c.now);
    if (e == null) {
      if (!create) {
        return null;
      }
      e = new Entry(new HashMap<Key, byte[]>());
      c.slot.put(key, e);
    }
    HashMap<Key, byte[]> h = e.hash();
    if (h == null) {
      throw new CommandError(CommandError.WRONGTYPE);
    }
    return h;
  }

  private int hset(Call c, boolean onlyNew) {
    if (c.argc() % 2 != 0) {
      throw new CommandError("ERR wrong number of arguments for '" + c.str(0).toLowerCase(java.util.Locale.ROOT)
          + "' command");
    }
    Entry existing = c.slot.get(c.key(1), c.now);
    if (existing != null && existing.hash() == null) {
      throw new CommandError(CommandError.WRONGTYPE);
    }
    HashMap<Key, byte[]> h = hash(c, true);
    int added = 0;
    long delta = 0;
    for (int i = 2; i < c.argc(); i += 2) {
      Key f = c.key(i);
      if (onlyNew && h.containsKey(f)) {
        continue;
      }
      byte[] old = h.put(f, c.arg(i + 1));
      delta += Entry.fieldBytes(f.bytes(), c.arg(i + 1));
      if (old == null) {
        added++;
      } else {
        delta -= Entry.fieldBytes(f.bytes(), old);
      }
    }
    c.slot.resized(delta);
    if (!onlyNew || added > 0) {
      c.slot.changed(c.key(1));
    }
    return added;
  }

  private void hdel(Call c) {
    HashMap<Key, byte[]> h = hash(c, false);
    int n = 0;
    if (h != null) {
      long delta = 0;
      for (int i = 2; i < c.argc(); i++) {
        byte[] old = h.remove(c.key(i));
        if (old != null) {
          n++;
          delta -= Entry.fieldBytes(c.arg(i), old);
        }
      }
      c.slot.resized(delta);
      if (n > 0) {
        c.slot.changed(c.key(1));
      }
      if (h.isEmpty()) {
        c.slot.remove(c.key(1));
      }
    }
    c.reply.integer(n);
  }

  private void hincrby(Call c) {
    long delta = c.integer(3);
    Entry existing = c.slot.get(c.key(1), c.now);
    if (existing != null && existing.hash() == null) {
      throw new CommandError(CommandError.WRONGTYPE);
    }
    HashMap<Key, byte[]> h = existing == null ? null : existing.hash();
    Key f = c.key(2);
    long current = 0;
    byte[] old = h == null ? null : h.get(f);
    if (old != null) {
      Long v = Numbers.parseLong(old);
      if (v == null) {
        throw new CommandError("ERR hash value is not an integer");
      }
      current = v;
    }
    long next;
    try {
      next = Math.addExact(current, delta);
    } catch (ArithmeticException e) {
      throw new CommandError("ERR increment or decrement would overflow");
    }
    put(c, f, old, Numbers.bytes(next));
    c.reply.integer(next);
  }

  private void hincrbyfloat(Call c) {
    double delta = c.dbl(3);
    if (Double.isInfinite(delta)) {
      throw new CommandError("ERR value is NaN or Infinity");
    }
    Entry existing = c.slot.get(c.key(1), c.now);
    if (existing != null && existing.hash() == null) {
      throw new CommandError(CommandError.WRONGTYPE);
    }
    HashMap<Key, byte[]> h = existing == null ? null : existing.hash();
    Key f = c.key(2);
    double current = 0;
    byte[] old = h == null ? null : h.get(f);
    if (old != null) {
      Double v = Numbers.parseDouble(old);
      if (v == null) {
        throw new CommandError("ERR hash value is not a float");
      }
      current = v;
    }
    String sum = Double.isInfinite(current) ? null : Numbers.addFloats(old, current, c.arg(3), delta);
    if (sum == null) {
      throw new CommandError("ERR increment would produce NaN or Infinity");
    }
    byte[] text = sum.getBytes(java.nio.charset.StandardCharsets.US_ASCII);
    put(c, f, old, text);
    c.reply.bulk(text);
  }

  private static void put(Call c, Key f, byte[] old, byte[] value) {
    HashMap<Key, byte[]> h = hash(c, true);
    h.put(f, value);
    c.slot.resized(Entry.fieldBytes(f.bytes(), value) - (old == null ? 0 : Entry.fieldBytes(f.bytes(), old)));
    c.slot.changed(c.key(1));
  }
}
