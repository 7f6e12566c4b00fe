package io.atoll.server.http;

/** A minimal JSON writer: enough for flat objects and arrays of them. Not thread-safe. */
final class Json {
  private final StringBuilder sb = new StringBuilder();
  private boolean needComma;

  Json beginObject() {
    comma();
    sb.append('{');
    needComma = false;
    return this;
  }

  Json endObject() {
    sb.append('}');
    needComma = true;
    return this;
  }

  Json beginArray() {
    comma();
    sb.append('[');
    needComma = false;
    return this;
  }

  Json endArray() {
    sb.append(']');
    needComma = true;
    return this;
  }

  /** Writes {@code "name":} and leaves the value to the next call. */
  Json name(String name) {
    comma();
    string(name);
    sb.append(':');
    needComma = false;
    return this;
  }

  Json value(String s) {
    comma();
    if (s == null) {
      sb.append("null");
    } else {
      string(s);
    }
    needComma = true;
    return this;
  }

  Json value(long n) {
    comma();
    sb.append(n);
    needComma = true;
    return this;
  }

  Json value(double d) {
    comma();
    sb.append(Double.isFinite(d) ? Double.toString(d) : "null");
    needComma = true;
    return this;
  }

  Json value(boolean b) {
    comma();
    sb.append(b);
    needComma = true;
    return this;
  }

  Json field(String name, String v) {
    return name(name).value(v);
  }

  Json field(String name, long v) {
    return name(name).value(v);
  }

  Json field(String name, boolean v) {
    return name(name).value(v);
  }

  private void comma() {
    if (needComma) {
      sb.append(',');
    }
  }

  private void string(String s) {
    sb.append('"');
    for (int i = 0; i < s.length(); i++) {
      char c = s.charAt(i);
      switch (c) {
        case '"' -> sb.append("\\\"");
        case '\\' -> sb.append("\\\\");
        case '\n' -> sb.append("\\n");
        case '\r' -> sb.append("\\r");
        case '\t' -> sb.append("\\t");
        default -> {
          if (c < 0x20 || c == '<' || c == '>' || c == '&') {
            sb.append(String.format("\\u%04x", (int) c));
          } else {
            sb.append(c);
          }
        }
      }
    }
    sb.append('"');
  }

  @Override
  public String toString() {
    return sb.toString();
  }
}
