package io.atoll.examples.carts;

import static java.util.concurrent.TimeUnit.SECONDS;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.atoll.core.FencingToken;
import io.atoll.runtime.EntityRef;
import io.atoll.runtime.Sharding;
import io.atoll.testkit.LocalCluster;
import io.atoll.testkit.junit.AtollCluster;
import io.atoll.testkit.junit.PodTemplate;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.ExecutionException;
import org.junit.jupiter.api.Test;

/** The cart service on a real two-pod cluster (gRPC on loopback) from Atoll's testkit. */
@AtollCluster(shards = 30, pods = 2, podTemplate = CartTest.CartPods.class)
class CartTest {

  static final String DB = "jdbc:h2:mem:carts;DB_CLOSE_DELAY=-1";

  /** Every pod hosts carts kept in the shared database. */
  public static final class CartPods implements PodTemplate {
    @Override
    public Sharding.Builder apply(Sharding.Builder b) {
      try {
        CartStore store = new CartStore(DB);
        return b.register(Cart.TYPE, ctx -> new Cart(store));
      } catch (java.sql.SQLException e) {
        throw new IllegalStateException(e);
      }
    }
  }

  @Test
  void aCartIsTheSameFromEveryPodAndKeepsItsItemsWhenItMoves(LocalCluster cluster) throws Exception {
    EntityRef<CartMsg> fromA = cluster.pods().get(0).entity(Cart.TYPE, "alice");
    EntityRef<CartMsg> fromB = cluster.pods().get(1).entity(Cart.TYPE, "alice");
    assertThat(fromA.<Integer>ask(r -> new CartMsg.Add("apple", 2, r)).toCompletableFuture().get(5, SECONDS))
        .isEqualTo(2);
    assertThat(fromB.<Integer>ask(r -> new CartMsg.Add("pear", 1, r)).toCompletableFuture().get(5, SECONDS))
        .isEqualTo(3);

    cluster.addPod();                              // a third pod joins and takes its share of carts,
    cluster.awaitSettled(Duration.ofSeconds(20));  // alice's perhaps among them
    assertThat(fromA.<Map<String, Integer>>ask(CartMsg.Get::new).toCompletableFuture().get(5, SECONDS))
        .isEqualTo(Map.of("apple", 2, "pear", 1));
    assertThat(fromB.<Integer>ask(CartMsg.Checkout::new).toCompletableFuture().get(5, SECONDS)).isEqualTo(3);
  }

  @Test
  void badItemsAreRefusedWithTheReason(LocalCluster cluster) {
    EntityRef<CartMsg> cart = cluster.pods().get(0).entity(Cart.TYPE, "bob");
    assertThatThrownBy(() -> cart.<Integer>ask(r -> new CartMsg.Add("", 1, r)).toCompletableFuture().get(5, SECONDS))
        .isInstanceOf(ExecutionException.class).hasMessageContaining("expected: a sku of 1..64 characters");
  }

  @Test
  void anOlderActivationCannotWriteOnceANewerOneClaimedTheCart() throws Exception {
    CartStore store = new CartStore(DB);
    FencingToken old = new FencingToken(7, 10);
    FencingToken newer = new FencingToken(7, 11);
    store.claim("carol", old);
    store.save("carol", old, Map.of("tea", 1));
    assertThat(store.claim("carol", newer)).isEqualTo(Map.of("tea", 1));
    assertThatThrownBy(() -> store.save("carol", old, Map.of("tea", 99))).isInstanceOf(CartStore.FencedException.class);
    assertThatThrownBy(() -> store.claim("carol", old)).isInstanceOf(CartStore.FencedException.class);
    assertThat(store.claim("carol", newer)).isEqualTo(Map.of("tea", 1));
  }
}
