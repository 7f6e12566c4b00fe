package io.atoll.kv.internal.command;

/**
 * One client connection's state: id, name, flags, whether it came over TLS and whether it has
 * authenticated. Confined to the connection's event loop, except the fields CLIENT LIST reads,
 * which are volatile.
 */
public final class Session {
  private final long id;
  private final String addr;
  private final String laddr;
  private final long createdAt;
  private final boolean tls;
  private volatile String name = "";
  private volatile String libName = "";
  private volatile String libVersion = "";
  private volatile int protocol = 2;
  private volatile String lastCommand = "NULL";
  private volatile long lastActive;
  boolean asking;
  boolean readonly;
  boolean closeAfterReply;
  boolean authenticated;
  /**
   * How far the log must be written before this connection's next replies leave: its position
   * after the last command (the connection's thread only). A read waits too: what it saw may be
   * another connection's write, not yet in the log.
   */
  private long logPosition;
  /** Whether a write ran since the replies were last sent: they must not leave if the log failed. */
  private boolean wrote;
  /** How far replicas must hold the stream before this connection's next replies leave (0: no wait). */
  private long replicaPosition;
  /** It proved to be another node of this cluster (CLUSTER ATOLL-NODE): it may send hand-off commands. */
  boolean node;
  /**
   * Managed mode, on a hand-off's target: the token of the attempt this connection's last {@code
   * CLUSTER ATOLL-IMPORTING} named (0: none, as a source that predates tokens sends): its
   * RESTORE-ASKING requests store only in a slot whose current attempt is still that one.
   */
  long handOffToken;
  /**
   * MULTI: the commands queued for EXEC, with the slot of each keyed one (-1: keyless), or null
   * outside a transaction; whether one was refused while queued (EXEC then aborts).
   */
  java.util.List<Queued> queued;
  boolean queuedRefused;
  /** The client port a replica said it listens on (REPLCONF listening-port), 0 if none. */
  private volatile int listeningPort;
  /**
   * WATCH: the keys this connection watches, each with its slot (the slot's lock guards the
   * registration), and whether one of them changed since (set by any thread, under that slot's lock).
   */
  final java.util.Set<Watched> watched = new java.util.LinkedHashSet<>();
  volatile boolean watchedChanged;
  final io.atoll.kv.internal.store.Slot.Watcher watcher = () -> watchedChanged = true;

  /** A watched key and its slot. */
  record Watched(io.atoll.kv.internal.store.Slot slot, io.atoll.kv.internal.store.Key key) {}

  /** A write run again after a pause of writes ended: it is not deferred a second time. */
  boolean resumed;

  /**
   * A command queued by MULTI, its slot (-1 if it has no keys), and what routing needs to check it
   * again at EXEC: its spec and key positions.
   */
  record Queued(byte[][] args, int slot, CommandSpec spec, int first, int last, int step) {}

  /** The nonce CLUSTER ATOLL-NODE answered on this connection, until a proof uses it. */
  String nodeNonce;
  int authFailures;

  /** A session for a connection from {@code addr} to {@code laddr}. */
  public Session(long id, String addr, String laddr, long now) {
    this(id, addr, laddr, now, false, true);
  }

  /**
   * A session for a connection from {@code addr} to {@code laddr}, over TLS or not, that starts
   * {@code authenticated} (no password is required) or not.
   */
  public Session(long id, String addr, String laddr, long now, boolean tls, boolean authenticated) {
    this.tls = tls;
    this.authenticated = authenticated;
    this.id = id;
    this.addr = addr;
    this.laddr = laddr;
    this.createdAt = now;
    this.lastActive = now;
  }

  /** The client id (CLIENT ID). */
  /** The log position the replies buffered so far wait for (0: none), and forgets it. */
  public long takeLogPosition() {
    long p = logPosition;
    logPosition = 0;
    return p;
  }

  /** The log position the replies buffered wait for (0: none), without forgetting it. */
  public long logPositionNow() {
    return logPosition;
  }

  /** Whether a write ran among the replies buffered so far, and forgets it. */
  public boolean takeWrote() {
    boolean w = wrote;
    wrote = false;
    return w;
  }

  /** A write ran (or a deferred one ended): if the log fails, the replies buffered must not leave. */
  public void wrote() {
    wrote = true;
  }

  /** The replies buffered wait until enough replicas hold the stream up to {@code position}. */
  public void replicaPosition(long position) {
    replicaPosition = Math.max(replicaPosition, position);
  }

  /** The stream position the replies buffered wait for replicas to hold (0: none), and forgets it. */
  public long takeReplicaPosition() {
    long p = replicaPosition;
    replicaPosition = 0;
    return p;
  }

  /** The replies buffered from now on wait until the log holds everything up to {@code position}. */
  public void logPosition(long position) {
    logPosition = Math.max(logPosition, position);
  }

  public long id() {
    return id;
  }

  /** The client port this connection's replica listens on (0: not a replica, or it did not say). */
  public int listeningPort() {
    return listeningPort;
  }

  /** REPLCONF listening-port. */
  public void listeningPort(int port) {
    listeningPort = port;
  }

  /** Whether the client came over TLS (then redirects and CLUSTER replies name TLS ports). */
  public boolean tls() {
    return tls;
  }

  /** Whether the client may run every command (it authenticated, or no password is required). */
  public boolean authenticated() {
    return authenticated;
  }

  /** Whether the connection must close once the current reply is written (QUIT). */
  public boolean closeAfterReply() {
    return closeAfterReply;
  }

  String name() {
    return name;
  }

  void name(String n) {
    name = n;
  }

  void lib(String libName, String libVersion) {
    if (libName != null) {
      this.libName = libName;
    }
    if (libVersion != null) {
      this.libVersion = libVersion;
    }
  }

  void protocol(int p) {
    protocol = p;
  }

  void touched(String command, long now) {
    lastCommand = command;
    lastActive = now;
  }

  /** The CLIENT INFO / CLIENT LIST line (without its newline). */
  String describe(long now) {
    return "id=" + id + " addr=" + addr + " laddr=" + laddr + " fd=8 name=" + name
        + " age=" + (now - createdAt) / 1000 + " idle=" + (now - lastActive) / 1000
        + " flags=" + (readonly ? "r" : "N") + " db=0 sub=0 psub=0 ssub=0 multi=-1 qbuf=0 qbuf-free=0 argv-mem=0"
        + " multi-mem=0 rbs=0 rbp=0 obl=0 oll=0 omem=0 tot-mem=0 events=r cmd=" + lastCommand
        + " user=default redir=-1 resp=" + protocol + " lib-name=" + libName + " lib-ver=" + libVersion;
  }
}
