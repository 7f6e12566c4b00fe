package io.atoll.store.etcd;

import io.atoll.core.spi.AssignmentStore;
import io.atoll.core.spi.StaleTermException;
import io.atoll.core.spi.StoreConflictException;
import io.atoll.core.spi.StoreException;
import io.atoll.core.spi.LeaderWatch;
import io.atoll.core.spi.StoreWatch;
import io.atoll.core.spi.VersionWatch;
import io.etcd.jetcd.ByteSequence;
import io.etcd.jetcd.Client;
import io.etcd.jetcd.ClientBuilder;
import io.etcd.jetcd.KeyValue;
import io.etcd.jetcd.kv.GetResponse;
import io.etcd.jetcd.kv.TxnResponse;
import io.etcd.jetcd.op.Cmp;
import io.etcd.jetcd.op.CmpTarget;
import io.etcd.jetcd.op.Op;
import io.etcd.jetcd.options.DeleteOption;
import io.etcd.jetcd.options.GetOption;
import io.etcd.jetcd.options.PutOption;
import io.etcd.jetcd.options.WatchOption;
import io.etcd.jetcd.watch.WatchResponse;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Arrays;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.function.Consumer;
import java.util.function.Supplier;

/**
 * The {@link AssignmentStore} in etcd, through jetcd.
 *
 * <p><b>Keys</b>: {@code /prefix/state} holds the writer's term (8 bytes) and the data, and its
 * etcd <em>version</em> (1 at creation, +1 per put) is the store's version;
 * {@code /prefix/term} holds the last term granted (decimal); {@code /prefix/leader} holds
 * {@code "term\nholder"}, attached to an etcd lease.
 *
 * <p><b>Compare-and-set</b> is one transaction: if the state key's version is the expected one and
 * the term key holds the writer's term, put the state. The comparison is on the key's version
 * rather than its mod revision: the version counts exactly the saves of this key, which is the
 * SPI's version, so no second counter is needed; both are set atomically by the same put.
 * <b>Leadership</b>: grant an etcd lease, then one transaction — if no leader key exists and the
 * term key is unchanged since it was read, put term + 1 and the leader key on the lease. A
 * renewal is a keep-alive of that lease; a lapsed one is taken again on a new lease if the term
 * is still the last one. etcd leases count whole seconds: a time to live is rounded up to one, and
 * the server may raise it to its minimum (1.5 × its election timeout).
 *
 * <p><b>Watch</b>: an etcd watch of the state key wakes the watch, which reads the state and
 * delivers it if its version grew; a poll every second covers a watch stream that is down.
 *
 * <p><b>Leader watch</b>: an etcd watch of the leader key (a put on a grant, a delete on a release
 * or when etcd expires the lease) wakes a read of the leader; a slow poll covers a broken stream.
 * etcd expires leases on its own schedule (its lessor checks about twice a second), so a standby
 * hears of a crashed leader up to about half a second after the time to live ran out.
 *
 * <p>jetcd reconnects by itself; a call that does not complete within the timeout fails with a
 * {@link StoreException}. Thread-safe.
 */
public final class EtcdAssignmentStore implements AssignmentStore {

  private static final System.Logger log = System.getLogger(EtcdAssignmentStore.class.getName());

  private final EtcdStoreOptions options;
  private final Client client;
  private final ByteSequence stateKey;
  private final ByteSequence termKey;
  private final ByteSequence leaderKey;
  private final String name;
  private Lease held; // guarded by this
  private long heldLeaseId; // guarded by this
  private volatile boolean closed;

  private EtcdAssignmentStore(EtcdStoreOptions options, Client client) {
    this.options = options;
    this.client = client;
    String p = "/" + options.prefix() + "/";
    this.stateKey = bs(p + "state");
    this.termKey = bs(p + "term");
    this.leaderKey = bs(p + "leader");
    this.name = "etcd store " + options.describe();
  }

  /**
   * Connects to the etcd at {@code uri} (see {@link EtcdStoreOptions} for its form) and checks
   * that it answers.
   *
   * @throws IllegalArgumentException if the URI is malformed
   * @throws StoreException if no member answers within the timeout
   */
  public static EtcdAssignmentStore open(String uri) {
    return open(EtcdStoreOptions.parse(uri));
  }

  /**
   * Connects with {@code options} and checks that etcd answers.
   *
   * @throws StoreException if no member answers within the timeout, or TLS cannot be set up
   */
  public static EtcdAssignmentStore open(EtcdStoreOptions options) {
    ClientBuilder b = Client.builder().endpoints(options.targets().toArray(String[]::new))
        .connectTimeout(options.timeout()).retryMaxDuration(options.timeout())
        .maxInboundMessageSize(Math.max(4 << 20, options.maxBytes() + (1 << 20)));
    if (options.user() != null) {
      b.user(bs(options.user())).password(bs(options.password()));
    }
    if (options.tls()) {
      try {
        b.sslContext(ssl -> {
          if (options.caCert() != null) {
            ssl.trustManager(options.caCert().toFile());
          }
        });
      } catch (javax.net.ssl.SSLException e) {
        throw new StoreException("etcd store " + options.describe() + ": cannot set up TLS: " + e.getMessage(), e);
      }
    }
    Client client = b.build();
    EtcdAssignmentStore s = new EtcdAssignmentStore(options, client);
    try {
      s.get(s.termKey); // fails now, not at the first save, if nothing answers
    } catch (StoreException e) {
      client.close();
      throw new StoreException("etcd store " + options.describe() + ": cannot connect: " + e.getMessage(), e);
    }
    return s;
  }

  private static ByteSequence bs(String s) {
    return ByteSequence.from(s, StandardCharsets.UTF_8);
  }

  private <T> T await(String what, Supplier<CompletableFuture<T>> call) {
    if (closed) {
      throw new StoreException(name + ": closed");
    }
    CompletableFuture<T> f = call.get();
    try {
      return f.get(options.timeout().toMillis(), TimeUnit.MILLISECONDS);
    } catch (ExecutionException e) {
      Throwable c = e.getCause() == null ? e : e.getCause();
      throw new StoreException(name + ": " + what + " failed: " + c.getMessage(), c);
    } catch (TimeoutException e) {
      f.cancel(true);
      throw new StoreException(name + ": " + what + " timed out after " + options.timeout().toMillis()
          + " ms (is etcd up at " + String.join(",", options.endpoints()) + "?)", e);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new StoreException(name + ": " + what + " interrupted", e);
    }
  }

  private Optional<KeyValue> get(ByteSequence key) {
    GetResponse r = await("reading " + key, () -> client.getKVClient().get(key));
    return r.getKvs().stream().findFirst();
  }

  private static Optional<KeyValue> first(GetResponse r) {
    return r.getKvs().stream().findFirst();
  }

  private long grantedTerm(Optional<KeyValue> kv) {
    try {
      return kv.map(k -> Long.parseLong(k.getValue().toString(StandardCharsets.UTF_8))).orElse(0L);
    } catch (NumberFormatException e) {
      throw new StoreException(name + ": damaged term key " + termKey + " (expected: a decimal number)", e);
    }
  }

  private Stored stored(KeyValue kv) {
    byte[] all = kv.getValue().getBytes();
    if (all.length < 8) {
      throw new StoreException(name + ": damaged state key (" + all.length + " bytes, expected: >= 8)");
    }
    return new Stored(kv.getVersion(), ByteBuffer.wrap(all).getLong(), Arrays.copyOfRange(all, 8, all.length));
  }

  @Override
  public Optional<Stored> load() {
    return get(stateKey).map(this::stored);
  }

  @Override
  public int maxBytes() {
    return options.maxBytes();
  }

  @Override
  public long save(byte[] data, long term, long expectedVersion) {
    if (data.length > options.maxBytes()) {
      throw new IllegalArgumentException("state: " + data.length + " bytes (expected: <= " + options.maxBytes()
          + ", this etcd store's max-bytes; raise it together with etcd's --max-request-bytes)");
    }
    byte[] value = ByteBuffer.allocate(8 + data.length).putLong(term).put(data).array();
    Cmp termIs = term == 0 ? new Cmp(termKey, Cmp.Op.EQUAL, CmpTarget.version(0))
        : new Cmp(termKey, Cmp.Op.EQUAL, CmpTarget.value(bs(Long.toString(term))));
    TxnResponse r = await("save", () -> client.getKVClient().txn()
        .If(new Cmp(stateKey, Cmp.Op.EQUAL, CmpTarget.version(expectedVersion)), termIs)
        .Then(Op.put(stateKey, ByteSequence.from(value), PutOption.DEFAULT))
        .Else(Op.get(stateKey, GetOption.DEFAULT), Op.get(termKey, GetOption.DEFAULT))
        .commit());
    if (r.isSucceeded()) {
      return expectedVersion + 1;
    }
    long granted = grantedTerm(first(r.getGetResponses().get(1)));
    long version = first(r.getGetResponses().get(0)).map(KeyValue::getVersion).orElse(0L);
    if (term < granted) {
      throw new StaleTermException(name, term, granted);
    }
    if (term > granted) {
      throw new StoreException(name + ": term " + term + " was never granted (expected: " + granted
          + ", the last one granted)");
    }
    throw new StoreConflictException(name, expectedVersion, version);
  }

  private static long ttlSeconds(Duration ttl) {
    return Math.max(1, (ttl.toMillis() + 999) / 1000);
  }

  @Override
  public synchronized Optional<Lease> tryAcquire(String holder, Duration ttl) {
    AssignmentStore.checkLeaseArguments(holder, ttl);
    Optional<KeyValue> t = get(termKey);
    long granted = grantedTerm(t);
    long termRevision = t.map(KeyValue::getModRevision).orElse(0L);
    var grant = await("granting a lease", () -> client.getLeaseClient().grant(ttlSeconds(ttl)));
    long next = granted + 1;
    TxnResponse r;
    try {
      r = await("taking the leadership", () -> client.getKVClient().txn()
          .If(new Cmp(leaderKey, Cmp.Op.EQUAL, CmpTarget.version(0)),
              new Cmp(termKey, Cmp.Op.EQUAL, CmpTarget.modRevision(termRevision)))
          .Then(Op.put(termKey, bs(Long.toString(next)), PutOption.DEFAULT),
              Op.put(leaderKey, bs(next + "\n" + holder), PutOption.builder().withLeaseId(grant.getID()).build()))
          .commit());
    } catch (StoreException e) {
      revokeQuietly(grant.getID());
      throw e;
    }
    if (!r.isSucceeded()) {
      revokeQuietly(grant.getID()); // a leader exists, or another candidate won the same term
      return Optional.empty();
    }
    held = new Lease(holder, next, Duration.ofSeconds(grant.getTTL()));
    heldLeaseId = grant.getID();
    return Optional.of(held);
  }

  private void revokeQuietly(long leaseId) {
    try {
      client.getLeaseClient().revoke(leaseId).get(options.timeout().toMillis(), TimeUnit.MILLISECONDS);
    } catch (Exception e) {
      // it lapses by itself
    }
  }

  @Override
  public synchronized boolean renew(Lease lease) {
    String mine = lease.term() + "\n" + lease.holder();
    Optional<KeyValue> leader = get(leaderKey);
    if (leader.isPresent()) {
      if (!leader.get().getValue().toString(StandardCharsets.UTF_8).equals(mine)) {
        dropIfHeld(lease);
        return false;
      }
      long id = leader.get().getLease();
      try {
        long ttl = await("renewing the lease", () -> client.getLeaseClient().keepAliveOnce(id)).getTTL();
        if (ttl > 0) {
          held = lease;
          heldLeaseId = id;
          return true;
        }
      } catch (StoreException e) {
        if (!String.valueOf(e.getMessage()).contains("not found")) {
          throw e;
        }
      }
    }
    // Lapsed: take it again on a new lease if no later term was granted.
    var grant = await("granting a lease", () -> client.getLeaseClient().grant(ttlSeconds(lease.ttl())));
    TxnResponse r = await("retaking the leadership", () -> client.getKVClient().txn()
        .If(new Cmp(leaderKey, Cmp.Op.EQUAL, CmpTarget.version(0)),
            new Cmp(termKey, Cmp.Op.EQUAL, CmpTarget.value(bs(Long.toString(lease.term())))))
        .Then(Op.put(leaderKey, bs(mine), PutOption.builder().withLeaseId(grant.getID()).build()))
        .commit());
    if (!r.isSucceeded()) {
      revokeQuietly(grant.getID());
      dropIfHeld(lease);
      return false;
    }
    held = lease;
    heldLeaseId = grant.getID();
    return true;
  }

  private void dropIfHeld(Lease lease) {
    if (lease.equals(held)) {
      held = null;
      heldLeaseId = 0;
    }
  }

  @Override
  public synchronized void release(Lease lease) {
    String mine = lease.term() + "\n" + lease.holder();
    await("releasing the lease", () -> client.getKVClient().txn()
        .If(new Cmp(leaderKey, Cmp.Op.EQUAL, CmpTarget.value(bs(mine))))
        .Then(Op.delete(leaderKey, DeleteOption.DEFAULT))
        .commit());
    if (lease.equals(held)) {
      revokeQuietly(heldLeaseId);
      dropIfHeld(lease);
    }
  }

  @Override
  public Optional<Leader> leader() {
    return get(leaderKey).map(kv -> {
      String s = kv.getValue().toString(StandardCharsets.UTF_8);
      int nl = s.indexOf('\n');
      try {
        return new Leader(s.substring(nl + 1), Long.parseLong(s.substring(0, nl)));
      } catch (RuntimeException e) {
        throw new StoreException(name + ": damaged leader key (expected: term\\nholder)", e);
      }
    });
  }

  @Override
  public Watch watch(long afterVersion, Consumer<Stored> onChange) {
    if (closed) {
      throw new StoreException(name + ": closed");
    }
    VersionWatch w = new VersionWatch(afterVersion, onChange, v -> load(), () -> closed,
        e -> log.log(System.Logger.Level.DEBUG, name + ": watch: " + e));
    // An etcd watch on the state key wakes the check; a one-second poll covers a broken stream.
    io.etcd.jetcd.Watch.Watcher watcher = wakeOnChange(stateKey, w, "watch stream");
    return w.pollEvery(Duration.ofSeconds(1), "atoll-etcd-store-watch").onClose(watcher::close);
  }

  /** An etcd watch of {@code key} that wakes {@code w}'s check on each change and on a stream error. */
  private io.etcd.jetcd.Watch.Watcher wakeOnChange(ByteSequence key, StoreWatch<?> w, String what) {
    return client.getWatchClient().watch(key, WatchOption.builder().build(), new io.etcd.jetcd.Watch.Listener() {
      @Override
      public void onNext(WatchResponse response) {
        w.wake();
      }

      @Override
      public void onError(Throwable t) {
        log.log(System.Logger.Level.DEBUG, name + ": " + what + ": " + t);
        w.wake();
      }

      @Override
      public void onCompleted() {
        // the poll goes on
      }
    });
  }

  /**
   * An etcd watch of the leader key wakes the check at once — a put when a leader takes the lease,
   * a delete when it releases it or etcd expires its lease; a read every {@code poll}, at least a
   * second apart, covers a watch stream that is down.
   */
  @Override
  public Watch watchLeader(Duration poll, LeaderListener listener) {
    LeaderWatch.checkPoll(poll);
    if (closed) {
      throw new StoreException(name + ": closed");
    }
    LeaderWatch w = new LeaderWatch(this::leader, listener, () -> closed,
        e -> log.log(System.Logger.Level.DEBUG, name + ": leader watch: " + e));
    io.etcd.jetcd.Watch.Watcher watcher = wakeOnChange(leaderKey, w, "leader watch stream");
    Duration backstop = poll.compareTo(Duration.ofSeconds(1)) < 0 ? Duration.ofSeconds(1) : poll;
    return w.pollEvery(backstop, "atoll-etcd-store-leader-watch").onClose(watcher::close);
  }

  @Override
  public void close() {
    Lease l;
    synchronized (this) {
      if (closed) {
        return;
      }
      l = held;
    }
    if (l != null) {
      try {
        release(l); // a standby takes over at once
      } catch (StoreException e) {
        // it lapses by itself
      }
    }
    closed = true;
    client.close();
  }

  /** The options this store was opened with. */
  public EtcdStoreOptions options() {
    return options;
  }

  @Override
  public String toString() {
    return name;
  }
}
