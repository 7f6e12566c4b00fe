package io.atoll.kv.internal.command;

import java.util.List;

/**
 * Snapshots of every key to the data directory (SAVE, BGSAVE, LASTSAVE, SHUTDOWN SAVE), as the
 * commands see them: the role Redis' RDB file plays. Thread-safe.
 */
public interface Snapshots {

  /** No data directory to save to (an embedded node without persistence, a managed node). */
  Snapshots NONE = new Snapshots() {
    @Override
    public void save() {
      throw new CommandError("ERR this node keeps no snapshots (no data directory, or a managed node)");
    }

    @Override
    public String bgsave() {
      save();
      return "";
    }

    @Override
    public long lastSave() {
      return 0;
    }

    @Override
    public List<String> info() {
      return List.of("rdb_changes_since_last_save:0", "rdb_bgsave_in_progress:0", "rdb_last_save_time:0",
          "rdb_last_bgsave_status:ok", "rdb_saves:0");
    }
  };

  /**
   * SAVE: writes a snapshot now and returns once it is on disk.
   *
   * @throws CommandError if one is under way, or it could not be written (with the cause)
   */
  void save();

  /**
   * BGSAVE: starts writing a snapshot in the background; Redis' reply text.
   *
   * @throws CommandError if one is under way
   */
  String bgsave();

  /** LASTSAVE: when the last snapshot was written (Unix seconds), else when the node started. */
  long lastSave();

  /** The {@code rdb_*} fields of {@code INFO persistence}, {@code name:value} each. */
  List<String> info();
}
