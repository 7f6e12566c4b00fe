package io.atoll.bench.sidebyside;

import io.grpc.CallOptions;
import io.grpc.ManagedChannel;
import io.grpc.MethodDescriptor;
import io.grpc.Server;
import io.grpc.ServerServiceDefinition;
import io.grpc.netty.shaded.io.grpc.netty.NettyChannelBuilder;
import io.grpc.netty.shaded.io.grpc.netty.NettyServerBuilder;
import io.grpc.stub.ClientCalls;
import io.grpc.stub.ServerCalls;
import java.io.ByteArrayInputStream;
import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.net.StandardSocketOptions;
import java.nio.ByteBuffer;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;
import java.util.Arrays;
import java.util.Map;
import java.util.concurrent.TimeUnit;

/**
 * The loopback floor, measured in the same run as the side-by-side figures so that a latency reads
 * as a multiple of what the machine allows: a bare TCP ping-pong (8 bytes each way, blocking
 * sockets, {@code TCP_NODELAY}, one platform thread per side) and a bare gRPC unary call (8 bytes
 * each way, grpc-java over Netty as Atoll's transport uses it, a blocking caller). Both ends run
 * in this JVM on 127.0.0.1; p50 and p99 of the round trip.
 *
 * <p>A third figure, the same TCP ping-pong with both ends spinning on non-blocking sockets, is the
 * loopback's own cost without any thread wake-up. The blocking ping-pong pays one wake-up per side,
 * and on a virtual machine that wake-up can be most of it and differ from one JVM to the next
 * (10.9 µs in one pair of a run and 72–82 µs in the others, on an otherwise idle 2-core machine).
 * The spinning one keeps both cores busy while it runs, so it is measured alone, as the others.
 *
 * <pre>
 * java -cp atoll-bench/target/benchmarks.jar io.atoll.bench.sidebyside.LoopbackFloor [--seconds 3] [--warmup 2]
 * </pre>
 *
 * Prints result lines (scenarios floor-tcp, floor-tcp-spin and floor-grpc). Public for the command
 * line; not API.
 */
public final class LoopbackFloor {

  private LoopbackFloor() {}

  /** Measures the three floors and prints their result lines. */
  public static void main(String[] argv) throws Exception {
    BenchArgs a = BenchArgs.parse(argv, java.util.List.of("floor"));
    Map<String, Double> tcp = tcp(a.warmup(), a.seconds());
    System.out.println("floor-tcp: " + Results.format(tcp));
    Results.emit("floor-tcp", tcp);
    Map<String, Double> spin = tcpSpinning(a.warmup(), a.seconds());
    System.out.println("floor-tcp-spin: " + Results.format(spin));
    Results.emit("floor-tcp-spin", spin);
    Map<String, Double> grpc = grpc(a.warmup(), a.seconds());
    System.out.println("floor-grpc: " + Results.format(grpc));
    Results.emit("floor-grpc", grpc);
    System.exit(0);
  }

  /** TCP ping-pong round trips: p50/p99 in microseconds. */
  static Map<String, Double> tcp(int warmup, int seconds) throws Exception {
    try (ServerSocket server = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
      Thread echo = Thread.ofPlatform().daemon().start(() -> {
        try (Socket s = server.accept()) {
          s.setTcpNoDelay(true);
          DataInputStream in = new DataInputStream(s.getInputStream());
          DataOutputStream out = new DataOutputStream(s.getOutputStream());
          while (true) {
            out.writeLong(in.readLong());
            out.flush();
          }
        } catch (IOException e) {
          // the client closed: done
        }
      });
      try (Socket c = new Socket()) {
        c.connect(new InetSocketAddress(InetAddress.getLoopbackAddress(), server.getLocalPort()));
        c.setTcpNoDelay(true);
        DataInputStream in = new DataInputStream(c.getInputStream());
        DataOutputStream out = new DataOutputStream(c.getOutputStream());
        return measure(warmup, seconds, i -> {
          try {
            out.writeLong(i);
            out.flush();
            if (in.readLong() != i) {
              throw new IllegalStateException("echo mismatch");
            }
          } catch (IOException e) {
            throw new UncheckedIOException(e);
          }
        });
      } finally {
        echo.interrupt();
      }
    }
  }

  /**
   * TCP ping-pong round trips with both ends spinning on non-blocking sockets (no thread ever
   * sleeps in a read): p50/p99 in microseconds.
   */
  static Map<String, Double> tcpSpinning(int warmup, int seconds) throws Exception {
    try (ServerSocketChannel server = ServerSocketChannel.open()) {
      server.bind(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), 1);
      Thread echo = Thread.ofPlatform().daemon().start(() -> {
        try (SocketChannel s = server.accept()) {
          s.setOption(StandardSocketOptions.TCP_NODELAY, true);
          s.configureBlocking(false);
          ByteBuffer b = ByteBuffer.allocateDirect(8);
          while (true) {
            b.clear();
            spinRead(s, b);
            b.flip();
            spinWrite(s, b);
          }
        } catch (IOException e) {
          // the client closed: done
        }
      });
      try (SocketChannel c = SocketChannel.open(server.getLocalAddress())) {
        c.setOption(StandardSocketOptions.TCP_NODELAY, true);
        c.configureBlocking(false);
        ByteBuffer b = ByteBuffer.allocateDirect(8);
        return measure(warmup, seconds, i -> {
          try {
            b.clear();
            b.putLong(i).flip();
            spinWrite(c, b);
            b.clear();
            spinRead(c, b);
            if (b.getLong(0) != i) {
              throw new IllegalStateException("echo mismatch");
            }
          } catch (IOException e) {
            throw new UncheckedIOException(e);
          }
        });
      } finally {
        echo.interrupt();
      }
    }
  }

  private static void spinRead(SocketChannel s, ByteBuffer b) throws IOException {
    while (b.hasRemaining()) {
      if (s.read(b) < 0) {
        throw new IOException("closed by the other end");
      }
    }
  }

  private static void spinWrite(SocketChannel s, ByteBuffer b) throws IOException {
    while (b.hasRemaining()) {
      s.write(b);
    }
  }

  /** gRPC unary round trips: p50/p99 in microseconds. */
  static Map<String, Double> grpc(int warmup, int seconds) throws Exception {
    MethodDescriptor<byte[], byte[]> method = MethodDescriptor.<byte[], byte[]>newBuilder()
        .setType(MethodDescriptor.MethodType.UNARY).setFullMethodName("floor.Echo/Echo")
        .setRequestMarshaller(BYTES).setResponseMarshaller(BYTES).build();
    ServerServiceDefinition service = ServerServiceDefinition.builder("floor.Echo")
        .addMethod(method, ServerCalls.asyncUnaryCall((req, resp) -> {
          resp.onNext(req);
          resp.onCompleted();
        }))
        .build();
    Server server = NettyServerBuilder.forAddress(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0))
        .addService(service).directExecutor().build().start();
    ManagedChannel channel = NettyChannelBuilder.forAddress("127.0.0.1", server.getPort()).usePlaintext()
        .directExecutor().build();
    try {
      byte[] payload = new byte[8];
      return measure(warmup, seconds, i -> {
        byte[] r = ClientCalls.blockingUnaryCall(channel, method, CallOptions.DEFAULT, payload);
        if (r.length != 8) {
          throw new IllegalStateException("echo mismatch");
        }
      });
    } finally {
      channel.shutdownNow().awaitTermination(5, TimeUnit.SECONDS);
      server.shutdownNow().awaitTermination(5, TimeUnit.SECONDS);
    }
  }

  private interface RoundTrip {
    void run(long i);
  }

  private static Map<String, Double> measure(int warmup, int seconds, RoundTrip rt) {
    long start = System.nanoTime();
    long measureFrom = start + TimeUnit.SECONDS.toNanos(warmup);
    long end = measureFrom + TimeUnit.SECONDS.toNanos(seconds);
    long[] samples = new long[1 << 22];
    int n = 0;
    for (long i = 0; ; i++) {
      long t0 = System.nanoTime();
      if (t0 >= end || n == samples.length) {
        break;
      }
      rt.run(i);
      if (t0 >= measureFrom) {
        samples[n++] = System.nanoTime() - t0;
      }
    }
    return Results.percentiles(Arrays.copyOf(samples, n));
  }

  private static final MethodDescriptor.Marshaller<byte[]> BYTES = new MethodDescriptor.Marshaller<>() {
    @Override
    public InputStream stream(byte[] value) {
      return new ByteArrayInputStream(value);
    }

    @Override
    public byte[] parse(InputStream stream) {
      try {
        return stream.readAllBytes();
      } catch (IOException e) {
        throw new UncheckedIOException(e);
      }
    }
  };
}
