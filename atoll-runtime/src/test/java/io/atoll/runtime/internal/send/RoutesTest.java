package io.atoll.runtime.internal.send;

import static org.assertj.core.api.Assertions.assertThat;

import io.atoll.core.PodAddress;
import io.atoll.core.PodId;
import io.atoll.core.ShardHasher;
import io.atoll.core.Spaces;
import io.atoll.runtime.DeliveryException;
import io.atoll.runtime.EntityType;
import io.atoll.runtime.internal.host.TypeRuntime;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * The routes over a layout that grows: a message of a type whose role has no space waits, in
 * send order and bounded, and goes to its shard's route when a space for the role is appended.
 */
class RoutesTest {

  static final TypeRuntime MAIL = new TypeRuntime(EntityType.of("mail", String.class).onRole("mailer"), null, null,
      -1);
  static final PodId OWNER = new PodId(new PodAddress("a", 1), 1);

  private final Fakes.VirtualTime time = new Fakes.VirtualTime();
  private final ShardRouteTest.FakeRouter router = new ShardRouteTest.FakeRouter();
  private final Fakes.Owner owner = new Fakes.Owner();
  private final Routes routes = new Routes(Spaces.parse("default=4"), ShardHasher.DEFAULT, 3,
      shard -> new ShardRoute(shard, 100, time, time, router));

  private Pending mail(String id, String m) {
    return new Pending(owner, MAIL, id, routes.shardOf(MAIL, id), m, false, 10_000_000_000L, time.nanoTime());
  }

  @Test
  void aTypeHasherThatPutsAnIdOutsideItsSpaceIsRefusedNotRoutedToAnotherSpace() {
    routes.grow(Spaces.parse("default=4,mailer=2"));
    for (int bad : new int[] {0, 3, -1}) {
      TypeRuntime t = new TypeRuntime(EntityType.of("mail", String.class).onRole("mailer")
          .withHasher((id, n) -> bad), null, null, -1);
      org.assertj.core.api.Assertions.assertThatThrownBy(() -> routes.shardOf(t, "m"))
          .isInstanceOf(IllegalArgumentException.class)
          .hasMessageContaining("entity type 'mail' put entity 'm' in shard " + bad + " (expected: 1..2)");
    }
    TypeRuntime inDefault = new TypeRuntime(EntityType.of("plain", String.class).withHasher((id, n) -> n + 1), null,
        null, -1);
    org.assertj.core.api.Assertions.assertThatThrownBy(() -> routes.shardOf(inDefault, "m"))
        .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("(expected: 1..4)");
    TypeRuntime fine = new TypeRuntime(EntityType.of("mail", String.class).onRole("mailer").withHasher((id, n) -> n),
        null, null, -1);
    assertThat(routes.shardOf(fine, "m")).isEqualTo(6);
  }

  @Test
  void aMessageWithoutASpaceWaitsAndGoesToItsShardInSendOrderOnceTheSpaceIsAppended() {
    List<Pending> sent = new ArrayList<>();
    for (int i = 0; i < 3; i++) {
      Pending p = mail("m", "msg" + i);
      assertThat(p.shard).isZero();
      assertThat(routes.place(p)).isFalse();
      sent.add(p);
    }
    assertThat(routes.waitingForSpace()).isEqualTo(3);
    assertThat(sent.get(0).where).contains("waiting for a shard space of role 'mailer'");
    Pending fourth = mail("m", "msg3");
    assertThat(routes.place(fourth)).isFalse();
    assertThat(fourth.exceptionNow()).isInstanceOfSatisfying(DeliveryException.class, e -> {
      assertThat(e.reason()).isEqualTo(DeliveryException.Reason.BUFFER_FULL);
      assertThat(e).hasMessageContaining("entity type 'mail' is on role 'mailer'");
    });

    router.owner = OWNER;
    routes.grow(Spaces.parse("default=4,mailer=2"));
    assertThat(routes.waitingForSpace()).isZero();
    assertThat(routes.all()).hasSize(7);
    int shard = routes.shardOf(MAIL, "m");
    assertThat(shard).isBetween(5, 6);
    assertThat(sent).allMatch(p -> p.shard == shard);
    assertThat(router.takeDispatched()).extracting(p -> p.message).containsExactly("msg0", "msg1", "msg2");
    // A later send reads the grown layout and goes straight to its route.
    Pending later = mail("m", "later");
    assertThat(later.shard).isEqualTo(shard);
    assertThat(routes.place(later)).isTrue();
  }

  @Test
  void aWaitingMessageThatTimedOutIsForgottenAndALayoutOfAnotherShapeChangesNothing() {
    Pending p = mail("m", "x");
    assertThat(routes.place(p)).isFalse();
    routes.forget(p);
    assertThat(routes.waitingForSpace()).isZero();
    routes.grow(Spaces.parse("mailer=4"));
    assertThat(routes.spaces()).isEqualTo(Spaces.parse("default=4"));
    assertThat(routes.all()).hasSize(5);
  }
}
