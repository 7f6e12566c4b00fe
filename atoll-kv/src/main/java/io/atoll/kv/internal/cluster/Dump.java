package io.atoll.kv.internal.cluster;

import io.atoll.kv.internal.store.Entry;
import io.atoll.kv.internal.store.Key;
import java.io.ByteArrayOutputStream;
import java.nio.ByteBuffer;
import java.util.HashMap;
import java.util.Map;

/**
 * DUMP/RESTORE payloads between Atoll KV nodes. Not Redis' RDB format: a magic byte, a format
 * version, the type, then length-prefixed bytes. A payload from anything else is refused with
 * Redis' "payload version or checksum are wrong" error.
 */
public final class Dump {
  private static final byte MAGIC = (byte) 0xA7;
  private static final byte FORMAT = 1;
  private static final byte STRING = 0;
  private static final byte HASH = 1;

  private Dump() {}

  /** The payload of a value. */
  public static byte[] dump(Entry e) {
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    out.write(MAGIC);
    out.write(FORMAT);
    if (e.isString()) {
      out.write(STRING);
      writeBytes(out, e.string());
    } else {
      out.write(HASH);
      HashMap<Key, byte[]> h = e.hash();
      writeInt(out, h.size());
      for (Map.Entry<Key, byte[]> f : h.entrySet()) {
        writeBytes(out, f.getKey().bytes());
        writeBytes(out, f.getValue());
      }
    }
    return out.toByteArray();
  }

  /** The value of a payload (no expiry), or null if it is not a valid payload. */
  public static Entry restore(byte[] payload) {
    try {
      ByteBuffer in = ByteBuffer.wrap(payload);
      if (in.get() != MAGIC || in.get() != FORMAT) {
        return null;
      }
      byte type = in.get();
      Entry e;
      if (type == STRING) {
        e = new Entry(readBytes(in));
      } else if (type == HASH) {
        int n = in.getInt();
        if (n < 0 || n > in.remaining() / 8) {
          return null;
        }
        HashMap<Key, byte[]> h = new HashMap<>();
        for (int i = 0; i < n; i++) {
          h.put(new Key(readBytes(in)), readBytes(in));
        }
        e = new Entry(h);
      } else {
        return null;
      }
      return in.hasRemaining() ? null : e;
    } catch (RuntimeException ex) {
      return null;
    }
  }

  private static void writeBytes(ByteArrayOutputStream out, byte[] b) {
    writeInt(out, b.length);
    out.write(b, 0, b.length);
  }

  private static void writeInt(ByteArrayOutputStream out, int v) {
    out.write(v >>> 24);
    out.write(v >>> 16);
    out.write(v >>> 8);
    out.write(v);
  }

  private static byte[] readBytes(ByteBuffer in) {
    int n = in.getInt();
    if (n < 0 || n > in.remaining()) {
      throw new IllegalArgumentException("length " + n);
    }
    byte[] b = new byte[n];
    in.get(b);
    return b;
  }
}
