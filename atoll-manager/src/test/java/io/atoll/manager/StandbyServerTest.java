package io.atoll.manager;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowableOfType;

import io.atoll.core.PodAddress;
import io.atoll.core.spi.AssignmentStore;
import io.atoll.transport.grpc.LeaderHint;
import io.atoll.transport.grpc.Wire;
import io.atoll.transport.grpc.proto.GetAssignmentsRequest;
import io.atoll.transport.grpc.proto.ShardManagerServiceGrpc;
import io.grpc.ManagedChannel;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;

/** A standby's refusals over real gRPC on loopback: the leader it names, and when. */
class StandbyServerTest {

  private static final AssignmentStore.Leader A = new AssignmentStore.Leader("127.0.0.1:7070", 3);
  private static final AssignmentStore.Leader B = new AssignmentStore.Leader("127.0.0.1:7071", 4);

  private static StatusRuntimeException call(ManagedChannel channel) {
    return catchThrowableOfType(StatusRuntimeException.class, () -> ShardManagerServiceGrpc.newBlockingStub(channel)
        .withDeadlineAfter(5, TimeUnit.SECONDS).getAssignments(GetAssignmentsRequest.getDefaultInstance()));
  }

  @Test
  void aNewLeaderIsNamedFromTheNextCallOnAndEveryCallGetsWholeTrailers() throws Exception {
    AtomicReference<Optional<AssignmentStore.Leader>> told = new AtomicReference<>(Optional.of(A));
    AtomicInteger reads = new AtomicInteger();
    try (StandbyServer server = StandbyServer.start("127.0.0.1", 0, () -> {
      reads.incrementAndGet();
      return told.get();
    })) {
      ManagedChannel channel = Wire.channel(server.address());
      try {
        StatusRuntimeException first = call(channel);
        assertThat(first.getStatus().getCode()).isEqualTo(Status.Code.UNAVAILABLE);
        assertThat(LeaderHint.refusal(first)).contains(new LeaderHint.Refusal(Optional.of(PodAddress.parse(
            A.holder())), 3));
        // the watch tells a new leader: the very next call names it (it used to be cached for 250 ms)
        told.set(Optional.of(B));
        assertThat(LeaderHint.refusal(call(channel))).contains(new LeaderHint.Refusal(Optional.of(PodAddress.parse(
            B.holder())), 4));
        told.set(Optional.empty());
        assertThat(LeaderHint.refusal(call(channel))).contains(new LeaderHint.Refusal(Optional.empty(), 0));
        assertThat(reads.get()).as("read at every call").isEqualTo(3);

        // many calls at once share one refusal: each still gets the leader and term, once
        told.set(Optional.of(B));
        ExecutorService callers = Executors.newFixedThreadPool(8);
        try {
          List<Future<StatusRuntimeException>> calls = new ArrayList<>();
          for (int i = 0; i < 200; i++) {
            calls.add(callers.submit(() -> call(channel)));
          }
          for (Future<StatusRuntimeException> f : calls) {
            StatusRuntimeException e = f.get(30, TimeUnit.SECONDS);
            assertThat(e.getTrailers().getAll(LeaderHint.KEY)).containsExactly(B.holder());
            assertThat(e.getTrailers().getAll(LeaderHint.TERM_KEY)).containsExactly("4");
          }
        } finally {
          callers.shutdownNow();
        }
      } finally {
        Wire.close(channel);
      }
    }
  }

  @Test
  void aLeaderSupplierThatThrowsGivesARefusalWithoutAHint() {
    try (StandbyServer server = StandbyServer.start("127.0.0.1", 0, () -> {
      throw new IllegalStateException("store away");
    })) {
      ManagedChannel channel = Wire.channel(server.address());
      try {
        assertThat(LeaderHint.refusal(call(channel))).contains(new LeaderHint.Refusal(Optional.empty(), 0));
      } finally {
        Wire.close(channel);
      }
    }
  }

  @Test
  void everyCallOfTheManagerServiceIsRefusedNamingTheLeaderAndAClosedStandbyListensNoMore() {
    StandbyServer server = StandbyServer.start("127.0.0.1", 0, () -> Optional.of(A));
    ManagedChannel channel = Wire.channel(server.address());
    try {
      var stub = ShardManagerServiceGrpc.newBlockingStub(channel).withDeadlineAfter(5, TimeUnit.SECONDS);
      List<org.assertj.core.api.ThrowableAssert.ThrowingCallable> calls = List.of(
          () -> stub.register(io.atoll.transport.grpc.proto.RegisterRequest.getDefaultInstance()),
          () -> stub.unregister(io.atoll.transport.grpc.proto.UnregisterRequest.getDefaultInstance()),
          () -> stub.renewLease(io.atoll.transport.grpc.proto.RenewLeaseRequest.getDefaultInstance()),
          () -> stub.notifyUnhealthyPod(io.atoll.transport.grpc.proto.NotifyUnhealthyPodRequest.getDefaultInstance()),
          () -> stub.watch(io.atoll.transport.grpc.proto.WatchRequest.getDefaultInstance()).hasNext(),
          () -> stub.rebalance(io.atoll.transport.grpc.proto.RebalanceRequest.getDefaultInstance()));
      for (var c : calls) {
        StatusRuntimeException e = catchThrowableOfType(StatusRuntimeException.class, c);
        assertThat(e.getStatus().getCode()).isEqualTo(Status.Code.UNAVAILABLE);
        assertThat(LeaderHint.refusal(e)).contains(new LeaderHint.Refusal(Optional.of(PodAddress.parse(A.holder())), 3));
      }
    } finally {
      Wire.close(channel);
      server.close();
    }
    try (java.net.ServerSocket again = new java.net.ServerSocket()) {
      again.bind(new java.net.InetSocketAddress("127.0.0.1", server.address().port()));
      assertThat(again.isBound()).as("the port is free once close returns").isTrue();
    } catch (java.io.IOException e) {
      throw new AssertionError("the standby's port is still taken after close: " + e, e);
    }
  }
}
