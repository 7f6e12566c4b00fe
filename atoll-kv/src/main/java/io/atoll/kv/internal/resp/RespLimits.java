package io.atoll.kv.internal.resp;

/**
 * The caps a {@link RespDecoder} checks before it buffers anything.
 *
 * @param maxBulkLength the longest bulk string (Redis' {@code proto-max-bulk-len})
 * @param maxArrayLength the most elements of a request array
 * @param maxInlineLength the longest inline request or length line (Redis: 64 KiB)
 * @param maxQueryBuffer the most bytes one request may hold in total (Redis'
 *     {@code client-query-buffer-limit})
 */
public record RespLimits(int maxBulkLength, int maxArrayLength, int maxInlineLength, long maxQueryBuffer) {

  /** Defaults sized for a JVM heap rather than Redis' 512 MB bulks. */
  public static final RespLimits DEFAULT = new RespLimits(64 << 20, 1 << 20, 64 << 10, 256L << 20);

  /** Validates the limits. */
  public RespLimits {
    if (maxBulkLength < 1 || maxArrayLength < 1 || maxInlineLength < 16 || maxQueryBuffer < maxBulkLength) {
      throw new IllegalArgumentException("limits: bulk " + maxBulkLength + ", array " + maxArrayLength + ", inline "
          + maxInlineLength + ", query buffer " + maxQueryBuffer
          + " (expected: all positive, inline >= 16, query buffer >= bulk)");
    }
  }
}
