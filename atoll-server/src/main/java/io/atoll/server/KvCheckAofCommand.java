package io.atoll.server;

import io.atoll.kv.KvAofCheck;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;

/** {@code atoll kv-check-aof}: Redis' redis-check-aof for an Atoll KV node's append-only file. */
@Command(name = "kv-check-aof", mixinStandardHelpOptions = true,
    description = "Checks an Atoll KV append-only file (its manifest, its directory, or one file): every record"
        + " well formed and matching its checksum. Prints where each file stops being valid; with --fix, cuts the"
        + " last file there (what follows is lost). Exits 0 if every file is valid, 1 if not.")
final class KvCheckAofCommand implements Callable<Integer> {

  @Parameters(paramLabel = "PATH", description = "appendonly.aof.manifest, the appendonlydir holding it, or a file.")
  Path path;

  @Option(names = "--fix", description = "Cut the last file of the manifest at its last valid record.")
  boolean fix;

  @Override
  public Integer call() {
    if (!Files.exists(path)) {
      System.err.println("atoll kv-check-aof: " + path + ": no such file or directory (expected: a node's"
          + " appendonlydir, its appendonly.aof.manifest, or one of its files)");
      return 2;
    }
    List<KvAofCheck.FileReport> reports;
    try {
      reports = KvAofCheck.check(path, false);
    } catch (java.io.IOException | IllegalStateException e) {
      System.err.println("atoll kv-check-aof: " + e.getMessage());
      return 2;
    }
    boolean ok = true;
    for (KvAofCheck.FileReport r : reports) {
      System.out.println(r.line());
      if (r.problem() != null) {
        ok = false;
        System.out.println("  " + r.file() + ": " + r.problem());
      }
    }
    if (ok) {
      System.out.println("AOF is valid");
      return 0;
    }
    if (!fix) {
      System.out.println("AOF is not valid. Use the --fix option to cut it at offset "
          + reports.getLast().okUpTo() + " of " + reports.getLast().file().getFileName() + " (the "
          + (reports.getLast().size() - reports.getLast().okUpTo()) + " bytes after it are lost)");
      return 1;
    }
    try {
      KvAofCheck.FileReport last = reports.getLast();
      KvAofCheck.check(path, true);
      System.out.println("Successfully truncated " + last.file().getFileName() + " to offset " + last.okUpTo());
      return 0;
    } catch (java.io.IOException | IllegalStateException e) {
      System.err.println("atoll kv-check-aof: --fix: " + e.getMessage());
      return 1;
    }
  }
}
