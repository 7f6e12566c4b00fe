package io.atoll.kv.internal.replication;

import static io.atoll.kv.internal.command.Replication.NOREPLICAS;

import io.atoll.core.PodEntry;
import io.atoll.core.PodId;
import io.atoll.kv.internal.cluster.ClusterState;
import io.atoll.kv.internal.cluster.ClusterView;
import io.atoll.kv.internal.cluster.RespClient;
import io.atoll.kv.internal.command.CommandError;
import io.atoll.kv.internal.command.Replication;
import io.atoll.kv.internal.command.Session;
import io.atoll.kv.internal.resp.Numbers;
import io.atoll.kv.internal.resp.Reply;
import io.atoll.kv.internal.store.SlotStore;
import io.netty.channel.Channel;
import java.nio.charset.StandardCharsets;
import java.security.SecureRandom;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;
import java.util.function.LongSupplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A Redis-cluster-mode node's replication, as Redis has it: as a primary it keeps its stream in a
 * {@link Backlog} and runs a {@link Feed} per replica; as a replica (its config entry names its
 * primary, {@link ClusterView#myPrimary}) it runs a {@link Follower}. It follows the node's view:
 * {@link #viewChanged} starts, moves or stops the follower as the role changes. A manual failover
 * pauses this primary's writes ({@link #pauseWrites}) until its replica took its slots, or five
 * seconds passed.
 */
public final class Replicator implements Replication, AutoCloseable {
  private static final Logger LOG = LoggerFactory.getLogger(Replicator.class);
  /** Redis' CLUSTER_MF_TIMEOUT. */
  static final long FAILOVER_MILLIS = 5000;
  private static final byte[] PING = "ping".getBytes(StandardCharsets.US_ASCII);
  /** Most replicas one primary feeds: each is a thread and, while it copies, a slot's records in memory. */
  static final int MAX_REPLICAS = 16;
  /** Most clients blocked in WAIT at once. */
  static final int MAX_WAITERS = 10_000;

  /** Applies one record of the stream on a replica (see {@code Dispatcher#applyReplicated}). */
  @FunctionalInterface
  public interface Applier {
    void apply(byte[][] args);
  }

  /** How a node reaches others and what it may accept. */
  public record Settings(int myPort, byte[] password, int maxBulk, int timeoutMillis, int minReplicasToAck,
      long ackTimeoutMillis, boolean managed, java.nio.file.Path syncedMarker) {
    /** A Redis-cluster-mode node's settings. */
    public Settings(int myPort, byte[] password, int maxBulk, int timeoutMillis, int minReplicasToAck,
        long ackTimeoutMillis) {
      this(myPort, password, maxBulk, timeoutMillis, minReplicasToAck, ackTimeoutMillis, false, null);
    }
  }

  private final Backlog backlog;
  private final SlotStore store;
  private final ClusterState cluster;
  private final Settings settings;
  private final LongSupplier clock;
  private final ScheduledExecutorService timer;
  private final Map<Long, Feed> feeds = new ConcurrentHashMap<>();
  private final List<Waiter> waiters = new ArrayList<>(); // guarded by itself
  private volatile String replId = newReplId();
  private volatile Follower follower;
  private volatile PodId following;
  /** Guards the pause and the count of writes without keys under way. */
  private final Object keyless = new Object();
  private volatile CompletableFuture<Void> pause; // written under keyless
  private long pauseUntil; // keyless
  private int keylessWrites; // keyless
  private final java.util.concurrent.atomic.AtomicBoolean failingOver = new java.util.concurrent.atomic.AtomicBoolean();
  private volatile Applier applier;
  private volatile boolean closed;
  /**
   * How many replicas must hold a write before its reply leaves: --min-replicas-to-ack; in managed
   * mode no more than the manager gave this node (active ones), so that a node whose replica was
   * declared dead, or that has none, goes on alone (the manager promotes only a replica it names).
   */
  private volatile int required;
  /** Managed mode: the client ports of the replicas the manager gave this node (active ones). */
  private volatile java.util.Set<Integer> namedPorts = java.util.Set.of();

  /**
   * One wait: how many replicas, at which offset, until when (Long.MAX_VALUE: no limit), whether a
   * client's WAIT (else a reply held for --min-replicas-to-ack).
   */
  private record Waiter(int replicas, long offset, long deadline, boolean client, CompletableFuture<Integer> done) {}

  /** Replication over these parts; {@link #start} begins it. */
  public Replicator(Backlog backlog, SlotStore store, ClusterState cluster, Settings settings, LongSupplier clock,
      ScheduledExecutorService timer) {
    this.backlog = backlog;
    this.store = store;
    this.cluster = cluster;
    this.settings = settings;
    this.clock = clock;
    this.timer = timer;
  }

  /**
   * Starts: records of the stream a replica receives go to {@code applier}; the stream pings its
   * replicas every second (so a replica tells a quiet primary from a lost one).
   */
  public void start(Applier applier) {
    this.applier = applier;
    timer.scheduleWithFixedDelay(this::tick, 1, 1, TimeUnit.SECONDS);
    timer.scheduleWithFixedDelay(this::expireWaiters, 10, 10, TimeUnit.MILLISECONDS);
    viewChanged(cluster.view());
  }

  private static String newReplId() {
    byte[] b = new byte[20];
    new SecureRandom().nextBytes(b);
    return HexFormat.of().formatHex(b);
  }

  private void tick() {
    try {
      if (backlog.active() && !feeds.isEmpty() && following == null) {
        backlog.command(new byte[][] {PING});
      }
      checkWaiters();
    } catch (RuntimeException e) {
      LOG.warn("replication tick failed", e);
    }
  }

  /**
   * The node's view changed: follow the primary it names (a new one, or none any more), and end
   * a pause of writes once this node is a replica (its slots went to the replica that took over).
   * Called holding the cluster state's lock: it starts and stops threads, and waits for none.
   */
  public synchronized void viewChanged(ClusterView v) {
    if (settings.managed()) {
      List<PodId> named = v.replicasOf(v.me()).stream().filter(v.config()::isActive).toList();
      required = Math.min(settings.minReplicasToAck(), named.size());
      namedPorts = named.stream().map(r -> r.address().port()).collect(java.util.stream.Collectors.toUnmodifiableSet());
      syncedChanged();
    } else {
      required = settings.minReplicasToAck();
    }
    if (closed || applier == null) {
      return;
    }
    PodId primary = v.myPrimary();
    if (!Objects.equals(primary, following)) {
      Follower old = follower;
      follower = null;
      if (old != null) {
        old.stop();
      }
      if (following != null && primary == null) {
        replId = newReplId(); // a new primary starts a new history, as Redis' promoted replica
        LOG.info("replication: this node is a primary now (replication id {})", replId);
      }
      following = primary;
      store.following(primary != null);
      if (primary != null) {
        for (Feed f : feeds.values()) {
          f.stop(); // a replica serves no replicas of its own here
        }
        PodEntry e = v.config().pod(primary).orElseThrow();
        Follower f = new Follower(e.id().address().host(), e.id().address().port(), v.nodeId(primary),
            settings.password(),
            settings.myPort(), settings.maxBulk(), settings.timeoutMillis(), store, applier, clock);
        follower = f;
        Thread.ofPlatform().name("kv-replica-of-" + e.id().address().port()).daemon(true).start(f);
        LOG.info("replication: this node replicates {} at {}", v.nodeId(primary), e.id().address());
      }
    }
    if (primary != null) {
      endPause();
    }
  }

  /**
   * A replica the manager named holds this primary's whole stream: the marker says so on disk
   * (written before any write it acknowledges can be answered), and goes when no such replica is
   * left. A primary restarted on its data directory reads it ({@link #replicaHeldEverything}).
   */
  private synchronized void syncedChanged() {
    java.nio.file.Path marker = settings.syncedMarker();
    if (marker == null) {
      return;
    }
    boolean any = false;
    for (Feed f : feeds.values()) {
      any |= f.synced && counts(f);
    }
    try {
      if (any && !java.nio.file.Files.exists(marker)) {
        try (java.nio.channels.FileChannel c = java.nio.channels.FileChannel.open(marker,
            java.nio.file.StandardOpenOption.CREATE, java.nio.file.StandardOpenOption.WRITE)) {
          c.force(true);
        }
      } else if (!any) {
        java.nio.file.Files.deleteIfExists(marker);
      }
    } catch (java.io.IOException e) {
      LOG.warn("replication: cannot update {}: {}", marker, e.toString());
    }
  }

  /**
   * Whether a primary restarted on its data directory had, when it stopped, a replica holding its
   * whole stream: its {@code marker} is there (see {@link #syncedChanged}).
   */
  public static boolean replicaHeldEverything(java.nio.file.Path marker) {
    return java.nio.file.Files.exists(marker);
  }

  /** In managed mode only replicas the manager named count toward acknowledgements; else any. */
  private boolean counts(Feed f) {
    return !settings.managed() || namedPorts.contains(f.listeningPort);
  }

  // ---- as a primary

  @Override
  public CompletableFuture<Void> writesPaused() {
    return pause;
  }

  /**
   * Pauses writes for twice {@code millis} from now (a pause under way is extended, never cut), as
   * Redis pauses its clients for twice the manual failover's timeout: the replica gives up at
   * {@code millis}, so it never takes over from a primary that already resumed. Waits for the
   * writes without keys under way (MIGRATE's keys still moving), then takes every slot's lock once.
   */
  @Override
  public long pauseWrites(long millis) {
    if (following != null) {
      throw new CommandError("ERR this node is a replica: only a primary pauses its writes for a failover");
    }
    long until = clock.getAsLong() + 2 * Math.min(millis, FAILOVER_MILLIS);
    synchronized (keyless) {
      if (pause == null) {
        pause = new CompletableFuture<>();
      }
      if (until > pauseUntil) {
        pauseUntil = until;
        CompletableFuture<Void> p = pause;
        timer.schedule(() -> resumeIfDue(p), until - clock.getAsLong(), TimeUnit.MILLISECONDS);
      }
      long deadline = clock.getAsLong() + millis;
      while (keylessWrites > 0) {
        long left = deadline - clock.getAsLong();
        if (left <= 0) {
          endPause();
          throw new CommandError("ERR writes without keys under way (MIGRATE) did not end within " + millis
              + " ms: writes resume, no failover");
        }
        try {
          keyless.wait(left);
        } catch (InterruptedException e) {
          Thread.currentThread().interrupt();
          endPause();
          throw new CommandError("ERR interrupted");
        }
      }
    }
    // Every keyed write checks the pause holding its slot's lock: once each lock was taken once, no
    // write that missed the pause is still running, and the offset below is final until it ends.
    for (int s = 0; s < io.atoll.core.slots.KeySlots.SLOT_COUNT; s++) {
      synchronized (store.slot(s)) {
        // nothing: a barrier
      }
    }
    backlog.activate();
    return backlog.offset();
  }

  private void resumeIfDue(CompletableFuture<Void> p) {
    synchronized (keyless) {
      if (pause != p || clock.getAsLong() < pauseUntil) {
        return; // ended already, or extended (its own timer ends it)
      }
    }
    LOG.warn("replication: manual failover timed out: writes resume");
    endPause();
  }

  @Override
  public boolean enterKeylessWrite() {
    synchronized (keyless) {
      if (pause != null) {
        return false;
      }
      keylessWrites++;
      return true;
    }
  }

  @Override
  public void exitKeylessWrite() {
    synchronized (keyless) {
      keylessWrites--;
      keyless.notifyAll();
    }
  }

  private void endPause() {
    CompletableFuture<Void> p;
    synchronized (keyless) {
      p = pause;
      pause = null;
      pauseUntil = 0;
    }
    if (p != null) {
      p.complete(null);
    }
  }

  @Override
  public Consumer<Channel> psync(Session session, String askedId, long askedOffset) {
    if (following != null) {
      Follower f = follower;
      if (f == null || !f.upToDate()) {
        throw new CommandError("NOMASTERLINK Can't SYNC while not connected with my master");
      }
      throw new CommandError("ERR this replica serves no replicas of its own (expected: PSYNC to its primary)");
    }
    if (feeds.size() >= MAX_REPLICAS && !feeds.containsKey(session.id())) {
      throw new CommandError("ERR this primary feeds " + feeds.size() + " replicas already (expected: at most "
          + MAX_REPLICAS + ")");
    }
    long continueAt = -1;
    synchronized (backlog) {
      long from = askedOffset - 1; // Redis asks for the first byte it lacks, counted from 1
      if (askedId.equals(replId) && backlog.active() && from >= backlog.firstOffset() && from <= backlog.offset()) {
        continueAt = from;
      }
    }
    long at = continueAt;
    Feed[] made = new Feed[1];
    return channel -> {
      String host = channel.remoteAddress() instanceof java.net.InetSocketAddress a ? a.getHostString() : "?";
      Feed f = new Feed(channel, backlog, store, replId, at, session.listeningPort(), host, clock, () -> {
        feeds.remove(session.id(), made[0]);
        syncedChanged();
      }, this::syncedChanged);
      made[0] = f;
      Feed old = feeds.put(session.id(), f);
      if (old != null) {
        old.stop();
      }
      LOG.info("replication: replica {}:{} {}", host, session.listeningPort(),
          at < 0 ? "takes a full copy" : "continues at offset " + at);
      Thread.ofPlatform().name("kv-feed-" + session.listeningPort()).daemon(true).start(f);
    };
  }

  @Override
  public void replconf(Session session, byte[][] args) {
    if (args.length % 2 != 0) {
      throw new CommandError("ERR syntax error");
    }
    for (int i = 0; i < args.length; i += 2) {
      String opt = new String(args[i], StandardCharsets.UTF_8).toLowerCase(java.util.Locale.ROOT);
      switch (opt) {
        case "listening-port" -> {
          Long p = Numbers.parseLong(args[i + 1]);
          if (p == null || p < 0 || p > 65535) {
            throw new CommandError("ERR value is not an integer or out of range");
          }
          session.listeningPort(p.intValue());
        }
        case "ack" -> {
          Feed f = feeds.get(session.id());
          Long off = Numbers.parseLong(args[i + 1]);
          if (f != null && off != null) {
            f.ack(off);
            checkWaiters();
          }
          return; // as Redis: an ACK is never answered

        }
        case "getack" -> {
          return; // a replica's ACKs come unasked, each time it read all that arrived
        }
        case "ip-address", "capa", "rdb-only", "rdb-filter-only" -> {
          // taken as Redis takes them; nothing here depends on them
        }
        default -> throw new CommandError("ERR Unrecognized REPLCONF option: " + new String(args[i],
            StandardCharsets.UTF_8));
      }
    }
  }

  @Override
  public CompletableFuture<Integer> await(int replicas, long timeoutMillis) {
    if (following != null) {
      throw new CommandError("ERR WAIT cannot be used with replica instances. Please also note that since Redis 4.0"
          + " if a replica is configured to be writable (which is not the default) writes to replicas are just local"
          + " and are not propagated.");
    }
    long offset = backlog.offset();
    int now = ackedAtLeast(offset);
    if (now >= replicas) {
      return CompletableFuture.completedFuture(now);
    }
    Waiter w = new Waiter(replicas, offset, timeoutMillis > 0 ? clock.getAsLong() + timeoutMillis : Long.MAX_VALUE,
        true, new CompletableFuture<>());
    synchronized (waiters) {
      long clients = waiters.stream().filter(Waiter::client).count();
      if (clients >= MAX_WAITERS) {
        throw new CommandError("ERR " + MAX_WAITERS + " clients wait in WAIT already (expected: fewer, or a timeout)");
      }
      waiters.add(w);
    }
    checkWaiters();
    return w.done();
  }

  /**
   * Ends the waits whose time is up, with how many replicas hold their offset by then: one timer
   * task for all of them (a task per wait would pile up in the queue for as long as the timeout).
   */
  private void expireWaiters() {
    long now = clock.getAsLong();
    List<Waiter> due = new ArrayList<>();
    synchronized (waiters) {
      waiters.removeIf(w -> {
        if (w.deadline() <= now) {
          due.add(w);
          return true;
        }
        return false;
      });
    }
    for (Waiter w : due) {
      w.done().complete(ackedAtLeast(w.offset()));
    }
  }

  private int ackedAtLeast(long offset) {
    int n = 0;
    for (Feed f : feeds.values()) {
      if ("online".equals(f.state) && f.acked >= offset && counts(f)) {
        n++;
      }
    }
    return n;
  }

  private void checkWaiters() {
    List<Waiter> done = new ArrayList<>();
    synchronized (waiters) {
      if (waiters.isEmpty()) {
        return;
      }
      waiters.removeIf(w -> {
        if (w.done().isDone()) {
          return true;
        }
        if (ackedAtLeast(w.offset()) >= w.replicas()) {
          done.add(w);
          return true;
        }
        return false;
      });
    }
    for (Waiter w : done) {
      w.done().complete(ackedAtLeast(w.offset()));
    }
  }

  // ---- acknowledged by replicas (--min-replicas-to-ack)

  @Override
  public boolean acksWrites() {
    return required > 0 && following == null;
  }

  @Override
  public String writeRefusal() {
    if (!acksWrites()) {
      return null;
    }
    int online = 0;
    for (Feed f : feeds.values()) {
      if ("online".equals(f.state) && counts(f)) {
        online++;
      }
    }
    return online < required ? NOREPLICAS : null;
  }

  @Override
  public boolean isReplicated(long position) {
    return ackedAtLeast(position) >= required;
  }

  @Override
  public CompletableFuture<Boolean> whenReplicated(long position) {
    int n = required;
    if (ackedAtLeast(position) >= n) {
      return CompletableFuture.completedFuture(true);
    }
    // One wait per connection at most (it reads nothing more meanwhile): bounded by the connections.
    Waiter w = new Waiter(n, position, clock.getAsLong() + settings.ackTimeoutMillis(), false,
        new CompletableFuture<>());
    synchronized (waiters) {
      waiters.add(w);
    }
    checkWaiters();
    return w.done().thenApply(count -> count >= n);
  }

  // ---- as a replica

  @Override
  public void failover(String mode) {
    ClusterView v = cluster.view();
    PodId primary = v.myPrimary();
    if (primary == null) {
      throw new CommandError("ERR You should send CLUSTER FAILOVER to a replica");
    }
    Follower f = follower;
    if (mode.isEmpty() && (v.failed().contains(primary) || f == null || !f.upToDate())) {
      throw new CommandError("ERR Master is down or failed, please use CLUSTER FAILOVER FORCE");
    }
    if (f != null && "sync".equals(f.state())) {
      // Its store was cleared for the copy: it holds part of the keys. Redis would let it take over
      // with them; here it waits (a copy under way ends, or the link is given up).
      throw new CommandError("ERR this replica is taking a full copy of its primary (master_sync_in_progress:1):"
          + " it holds part of the keys; retry once ROLE says connected");
    }
    if (!failingOver.compareAndSet(false, true)) {
      throw new CommandError("ERR a manual failover of this replica is already under way");
    }
    LOG.info("replication: manual failover user request accepted ({})", mode.isEmpty() ? "default" : mode);
    if (!mode.isEmpty()) {
      // No election here: FORCE takes over as TAKEOVER does (Redis asks the primaries for votes).
      try {
        cluster.takeOver(0);
      } finally {
        failingOver.set(false);
      }
      return;
    }
    PodEntry e = v.config().pod(primary).orElseThrow();
    Thread.ofPlatform().name("kv-failover").daemon(true).start(() -> {
      try {
        manualFailover(e, f);
      } finally {
        failingOver.set(false);
      }
    });
  }

  /** Redis' manual failover: the primary stops writes, this replica catches up, then takes over. */
  private void manualFailover(PodEntry primary, Follower f) {
    long deadline = clock.getAsLong() + FAILOVER_MILLIS;
    long target;
    long primaryEpoch = 0;
    try (RespClient c = new RespClient(primary.id().address().host(), primary.id().address().port(),
        settings.timeoutMillis())) {
      if (settings.password() != null) {
        c.send(List.of("AUTH".getBytes(StandardCharsets.UTF_8), settings.password()));
        c.flush();
        String err = c.read();
        if (err != null) {
          throw new java.io.IOException("AUTH: " + err);
        }
      }
      c.send(List.of(b("CLUSTER"), b(Replication.PAUSE_COMMAND), b(Long.toString(FAILOVER_MILLIS))));
      c.flush();
      String line = c.readLine();
      if (!line.startsWith(":")) {
        throw new java.io.IOException(line);
      }
      target = Long.parseLong(line.substring(1));
      // The primary's current epoch: the slots are taken above it, even if this replica's view
      // has not heard of every epoch yet.
      c.send(List.of(b("CLUSTER"), b("INFO")));
      c.flush();
      String info = new String(c.readBulk(1 << 16), StandardCharsets.UTF_8);
      for (String l : info.split("\r\n")) {
        if (l.startsWith("cluster_current_epoch:")) {
          primaryEpoch = Long.parseLong(l.substring("cluster_current_epoch:".length()).trim());
        }
      }
    } catch (java.io.IOException | RuntimeException ex) {
      LOG.warn("replication: manual failover: the primary did not pause its writes: {}", ex.getMessage());
      return;
    }
    LOG.info("replication: received replication offset for paused master manual failover: {}", target);
    try {
      if (!f.awaitCaughtUp(target, deadline) || follower != f) {
        LOG.warn("replication: manual failover timed out (applied {} of {})", f.offset(), target);
        return;
      }
    } catch (InterruptedException ex) {
      Thread.currentThread().interrupt();
      return;
    }
    if (clock.getAsLong() > deadline) {
      LOG.warn("replication: manual failover timed out (caught up too late)");
      return;
    }
    LOG.info("replication: all of the primary's stream processed: taking over its slots");
    cluster.takeOver(primaryEpoch);
  }

  private static byte[] b(String s) {
    return s.getBytes(StandardCharsets.UTF_8);
  }

  // ---- ROLE and INFO

  @Override
  public void role(Reply r) {
    Follower f = follower;
    if (f != null) {
      r.array(5);
      r.bulk("slave");
      r.bulk(f.host());
      r.integer(f.port());
      r.bulk(f.state());
      r.integer("connect".equals(f.state()) || "connecting".equals(f.state()) ? -1 : f.offset());
      return;
    }
    List<Feed> online = new ArrayList<>();
    for (Feed fd : feeds.values()) {
      if ("online".equals(fd.state)) {
        online.add(fd);
      }
    }
    r.array(3);
    r.bulk("master");
    r.integer(backlog.offset());
    r.array(online.size());
    for (Feed fd : online) {
      r.array(3);
      r.bulk(fd.host);
      r.bulk(Integer.toString(fd.listeningPort));
      r.bulk(Long.toString(fd.acked));
    }
  }

  @Override
  public List<String> info() {
    List<String> l = new ArrayList<>();
    Follower f = follower;
    long now = clock.getAsLong();
    if (f != null) {
      boolean up = "connected".equals(f.state());
      l.add("role:slave");
      l.add("master_host:" + f.host());
      l.add("master_port:" + f.port());
      l.add("master_link_status:" + (up ? "up" : "down"));
      l.add("master_last_io_seconds_ago:" + (f.lastIo() == 0 ? -1 : (now - f.lastIo()) / 1000));
      l.add("master_sync_in_progress:" + ("sync".equals(f.state()) ? 1 : 0));
      l.add("slave_read_repl_offset:" + f.offset());
      l.add("slave_repl_offset:" + f.offset());
      if (!up) {
        l.add("master_link_down_since_seconds:" + (now - f.downSince()) / 1000);
      }
      l.add("slave_priority:100");
      l.add("slave_read_only:1");
      l.add("replica_announced:1");
    } else {
      l.add("role:master");
    }
    List<Feed> all = new ArrayList<>(feeds.values());
    l.add("connected_slaves:" + all.size());
    for (int i = 0; i < all.size(); i++) {
      Feed fd = all.get(i);
      l.add("slave" + i + ":ip=" + fd.host + ",port=" + fd.listeningPort + ",state=" + fd.state + ",offset="
          + fd.acked + ",lag=" + ("online".equals(fd.state) ? (now - fd.ackedAt) / 1000 : 0));
    }
    l.add("master_failover_state:no-failover");
    l.add("master_replid:" + (f != null && f.replId() != null ? f.replId() : replId));
    l.add("master_replid2:0000000000000000000000000000000000000000");
    long offset = f != null ? f.offset() : backlog.offset();
    l.add("master_repl_offset:" + offset);
    l.add("second_repl_offset:-1");
    l.add("repl_backlog_active:" + (backlog.active() ? 1 : 0));
    l.add("repl_backlog_size:" + backlog.capacity());
    l.add("repl_backlog_first_byte_offset:" + (backlog.firstOffset() + 1));
    l.add("repl_backlog_histlen:" + (backlog.offset() - backlog.firstOffset()));
    return l;
  }

  @Override
  public long offset() {
    Follower f = follower;
    return f != null ? f.offset() : backlog.offset();
  }

  @Override
  public synchronized void close() {
    closed = true;
    Follower f = follower;
    if (f != null) {
      f.stop();
    }
    for (Feed fd : feeds.values()) {
      fd.stop();
    }
    endPause();
  }
}
