package io.atoll.server;

import io.atoll.runtime.Sharding;
import io.atoll.server.demo.Account;
import io.atoll.server.demo.AccountDb;
import io.atoll.server.demo.AccountMsg;
import io.atoll.server.demo.AccountsDatabase;
import io.atoll.testkit.LocalCluster;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Comparator;
import java.util.concurrent.Callable;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import picocli.CommandLine.Command;

/**
 * {@code atoll warm-up} (hidden): a shard manager, a pod of the demo's accounts on a database of
 * its own, and a client, all in this process on loopback, for a few deposits, then gone. It loads
 * the classes a pod and a manager load when they start, so that the {@code ./atoll} script can
 * record them in a class-data archive ({@code -XX:ArchiveClassesAtExit}) once per build, and every
 * JVM of the demo, the joining pod's among them, starts faster (an idle pod in 0.9–1.0 s instead of 1.7–1.9 s).
 */
@Command(name = "warm-up", hidden = true, description = "Loads what a manager and a pod load, then exits (for"
    + " the class-data archive the atoll script records).")
final class WarmUpCommand implements Callable<Integer> {

  @Override
  public Integer call() throws Exception {
    Path dir = Files.createTempDirectory("atoll-warm-up");
    try (AccountsDatabase db = AccountsDatabase.start(dir.resolve("db"));
        AccountDb accounts = new AccountDb(db.url(), 2);
        LocalCluster cluster = LocalCluster.builder().shards(8).dir(dir.resolve("manager")).start()) {
      cluster.addPod(b -> b.register(Account.TYPE, Account.factory(accounts)));
      Sharding client = cluster.addClient();
      cluster.awaitSettled(Duration.ofSeconds(30));
      for (int i = 0; i < 16; i++) {
        client.entity(Account.TYPE, "a" + i).tell(new AccountMsg.Deposit(i + 1, 1)).toCompletableFuture()
            .get(10, TimeUnit.SECONDS);
      }
      client.entity(Account.TYPE, "a0").<Long>ask(AccountMsg.Balance::new).toCompletableFuture()
          .get(10, TimeUnit.SECONDS);
    } finally {
      try (Stream<Path> files = Files.walk(dir)) {
        files.sorted(Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
      }
    }
    return 0;
  }
}
