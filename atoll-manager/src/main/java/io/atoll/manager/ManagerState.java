package io.atoll.manager;

import io.atoll.core.ClusterConfig;
import io.atoll.core.spi.StoreException;
import java.nio.ByteBuffer;
import java.util.Arrays;

/**
 * What the shard manager persists: its term and the cluster config, as one blob.
 *
 * <pre>
 * magic 'A' 'M', format 1, term (8 bytes), the config's own encoding
 * </pre>
 *
 * @param term the term of the manager that wrote it; each manager start writes term + 1
 * @param config the assignments
 */
public record ManagerState(long term, ClusterConfig config) {

  private static final byte FORMAT = 1;

  /** Encodes the state. */
  public byte[] encode() {
    byte[] c = config.encode();
    return ByteBuffer.allocate(3 + 8 + c.length).put((byte) 'A').put((byte) 'M').put(FORMAT).putLong(term).put(c)
        .array();
  }

  /**
   * Decodes a stored state.
   *
   * @throws StoreException if the bytes are not a manager state, saying what was wrong
   */
  public static ManagerState decode(byte[] bytes) {
    if (bytes.length < 11 || bytes[0] != 'A' || bytes[1] != 'M') {
      throw new StoreException("manager state: " + bytes.length + " bytes without the 'AM' header"
          + " (expected: a state written by an Atoll shard manager)");
    }
    if (bytes[2] != FORMAT) {
      throw new StoreException("manager state: format " + bytes[2] + " (expected: " + FORMAT + ")");
    }
    long term = ByteBuffer.wrap(bytes, 3, 8).getLong();
    try {
      return new ManagerState(term, ClusterConfig.decode(Arrays.copyOfRange(bytes, 11, bytes.length)));
    } catch (IllegalArgumentException e) {
      throw new StoreException("manager state: " + e.getMessage(), e);
    }
  }
}
