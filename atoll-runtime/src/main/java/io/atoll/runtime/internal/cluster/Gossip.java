package io.atoll.runtime.internal.cluster;

import io.atoll.core.ClusterConfig;
import io.atoll.core.PodId;
import io.atoll.core.Ticker;
import io.atoll.transport.grpc.Wire;
import io.atoll.transport.grpc.proto.ConfigBytes;
import io.atoll.transport.grpc.proto.GossipRequest;
import io.atoll.transport.grpc.proto.GossipResponse;
import io.atoll.transport.grpc.proto.PodServiceGrpc;
import io.grpc.stub.StreamObserver;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Pod-to-pod exchange of configs, so a pod that missed a manager push catches up: every interval
 * with one random peer (sending the config only if that peer has not had this epoch from us), and
 * at once, as a pull, when a peer refuses a message under a claim newer than ours. Thread-safe.
 */
public final class Gossip {

  private static final Logger log = LoggerFactory.getLogger(Gossip.class);
  private static final long HINT_INTERVAL_NANOS = TimeUnit.MILLISECONDS.toNanos(50);

  private final Ticker ticker;
  private final View view;
  private final PeerChannels channels;
  private final Random random;
  private final SignedConfigs configs;
  private final Map<PodId, Long> lastHint = new ConcurrentHashMap<>();
  private final Map<PodId, Long> lastSentEpoch = new ConcurrentHashMap<>();

  /** Gossip for {@code view}, over {@code channels}, choosing peers with {@code random}. */
  public Gossip(Ticker ticker, View view, PeerChannels channels, Random random, SignedConfigs configs) {
    this.configs = configs;
    this.ticker = ticker;
    this.view = view;
    this.channels = channels;
    this.random = random;
  }

  /** One round: exchanges configs with a random active peer. */
  public void once() {
    try {
      List<PodId> peers = view.peers();
      if (!peers.isEmpty()) {
        with(peers.get(random.nextInt(peers.size())), false);
      }
    } catch (RuntimeException e) {
      log.debug("gossip failed: {}", e.toString());
    }
  }

  /**
   * A peer refused a message of {@code shard} under a claim at {@code epoch}: if that is newer
   * than ours, fetch its config (at most every 50 ms per peer).
   */
  public void onNotOwner(PodId peer, int shard, long epoch) {
    if (shard < 1 || shard > view.numberOfShards() || epoch <= view.config().epoch(shard - 1)) {
      return;
    }
    long now = ticker.nanoTime();
    Long last = lastHint.get(peer);
    if (last != null && now - last < HINT_INTERVAL_NANOS) {
      return;
    }
    lastHint.put(peer, now);
    with(peer, true);
  }

  /** Forgets what it remembers of pods not in {@code live} (the active peers of the current view). */
  public void retainOnly(Set<PodId> live) {
    lastHint.keySet().retainAll(live);
    lastSentEpoch.keySet().retainAll(live);
  }

  /** How many pods it remembers something of (for tests of the bound). */
  int remembered() {
    Set<PodId> all = new HashSet<>(lastHint.keySet());
    all.addAll(lastSentEpoch.keySet());
    return all.size();
  }

  private void with(PodId peer, boolean pull) {
    ClusterConfig v = view.config();
    Long sent = lastSentEpoch.get(peer);
    boolean send = !pull && (sent == null || sent != v.epoch());
    if (send) {
      lastSentEpoch.put(peer, v.epoch());
    }
    GossipRequest.Builder req = GossipRequest.newBuilder().setFrom(Wire.ref(view.self())).setEpoch(v.epoch())
        .setClusterId(v.clusterId().toString());
    ConfigBytes signed = configs.newest();
    if (send && signed != null) {
      req.setConfig(signed); // what the manager signed, as it arrived: never a config of this pod's making
    }
    PodServiceGrpc.newStub(channels.channel(peer)).withDeadlineAfter(1, TimeUnit.SECONDS).gossip(req.build(),
        new StreamObserver<GossipResponse>() {
          @Override
          public void onNext(GossipResponse r) {
            if (r.hasConfig()) {
              try {
                view.onConfig(configs.fromPeer(r.getConfig(), "pod " + peer));
              } catch (RuntimeException e) {
                log.debug("pod {}: ignored a gossiped config from {}: {}", view.self(), peer, e.getMessage());
              }
            }
          }

          @Override
          public void onError(Throwable t) {
            lastSentEpoch.remove(peer);
          }

          @Override
          public void onCompleted() {}
        });
  }
}
