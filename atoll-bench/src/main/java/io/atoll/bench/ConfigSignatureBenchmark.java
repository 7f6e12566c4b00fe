package io.atoll.bench;

import io.atoll.core.ClusterConfig;
import io.atoll.transport.grpc.Wire;
import io.atoll.transport.grpc.proto.ConfigBytes;
import io.atoll.transport.grpc.security.ConfigSigner;
import io.atoll.transport.grpc.security.ManagerTrust;
import java.util.concurrent.TimeUnit;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.Warmup;

/**
 * What signed configs cost on the gossip and merge path, for a 1000-shard, 100-pod config:
 * {@link #decodeUnsigned()} is what a pod did per received config before; {@link #verifyAndDecode()}
 * adds the Ed25519 verification (a new config); {@link #verifyRepeated()} is the same config
 * gossiped again (remembered: a compare); {@link #sign()} is the manager's cost per published
 * config. None of it is on the message path.
 *
 * <p>Public because JMH requires it; not API.
 */
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.MICROSECONDS)
@Warmup(iterations = 3, time = 1)
@Measurement(iterations = 5, time = 1)
@Fork(1)
@State(Scope.Benchmark)
public class ConfigSignatureBenchmark {

  private ClusterConfig config;
  private ConfigSigner signer;
  private ConfigBytes signed;
  private ConfigBytes plain;
  private ManagerTrust remembering;
  private ClusterConfig copy;
  private boolean flip;

  /** Builds and signs the config, and checks that a fresh trust accepts it. */
  @Setup
  public void setUp() {
    config = Configs.unbalancedShards(1000, 100, 90, 7);
    signer = ConfigSigner.generate();
    signed = signer.bytes(config);
    plain = Wire.bytes(config);
    copy = ClusterConfig.decode(config.encode());
    remembering = new ManagerTrust();
    if (!remembering.fromManager(signed).equals(config)) {
      throw new IllegalStateException("a signed config does not verify and decode to itself");
    }
  }

  /** Decoding alone (the path before signatures). */
  @Benchmark
  public ClusterConfig decodeUnsigned() {
    return Wire.config(plain);
  }

  /** Verifying a config not seen before, then decoding it. */
  @Benchmark
  public ClusterConfig verifyAndDecode() {
    return new ManagerTrust().fromManager(signed);
  }

  /** The same config again (repeated gossip): a compare instead of a verification. */
  @Benchmark
  public ClusterConfig verifyRepeated() {
    return remembering.fromPeer(signed, "bench");
  }

  /** The manager's encoding and signing of a new config (its cache defeated). */
  @Benchmark
  public ConfigBytes sign() {
    flip = !flip;
    return signer.bytes(flip ? config : copy); // two distinct objects: the signer caches only the last
  }
}
