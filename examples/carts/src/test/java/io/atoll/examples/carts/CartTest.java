package io.atoll.examples.carts;

import static java.util.concurrent.TimeUnit.SECONDS;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.atoll.core.FencingToken;
import io.atoll.core.spi.StateStoreException;
import io.atoll.runtime.EntityRef;
import io.atoll.runtime.Sharding;
import io.atoll.state.jdbc.JdbcStateStore;
import io.atoll.testkit.LocalCluster;
import io.atoll.testkit.junit.AtollCluster;
import io.atoll.testkit.junit.PodTemplate;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutionException;
import org.h2.jdbcx.JdbcDataSource;
import org.junit.jupiter.api.Test;

/** The cart service on a real two-pod cluster (gRPC on loopback) from Atoll's testkit. */
@AtollCluster(shards = 30, pods = 2, podTemplate = CartTest.CartPods.class)
class CartTest {

  static JdbcStateStore store() {
    JdbcDataSource ds = new JdbcDataSource();
    ds.setURL("jdbc:h2:mem:carts;DB_CLOSE_DELAY=-1");
    try {
      return JdbcStateStore.open(ds);
    } catch (StateStoreException e) {
      throw new IllegalStateException(e);
    }
  }

  /** Every pod hosts carts kept in the shared database. */
  public static final class CartPods implements PodTemplate {
    @Override
    public Sharding.Builder apply(Sharding.Builder b) {
      return b.register(Cart.TYPE, Cart.in(store()));
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
  void everyCartKeepsItsItemsWhenAPodStopsAndItsCartsMove(LocalCluster cluster) throws Exception {
    Sharding leaving = cluster.pods().get(1);
    List<EntityRef<CartMsg>> each = new ArrayList<>();
    for (int i = 0; i < 20; i++) {
      each.add(cluster.pods().get(0).entity(Cart.TYPE, "shopper-" + i));
      int n = i + 1;
      assertThat(each.get(i).<Integer>ask(r -> new CartMsg.Add("tea", n, r)).toCompletableFuture().get(5, SECONDS))
          .isEqualTo(n);
    }
    cluster.stopPod(leaving);                      // its carts move to the pod that stays
    cluster.awaitSettled(Duration.ofSeconds(20));
    for (int i = 0; i < each.size(); i++) {
      assertThat(each.get(i).<Map<String, Integer>>ask(CartMsg.Get::new).toCompletableFuture().get(5, SECONDS))
          .isEqualTo(Map.of("tea", i + 1));
    }
  }

  @Test
  void badItemsAreRefusedWithTheReason(LocalCluster cluster) {
    EntityRef<CartMsg> cart = cluster.pods().get(0).entity(Cart.TYPE, "bob");
    assertThatThrownBy(() -> cart.<Integer>ask(r -> new CartMsg.Add("", 1, r)).toCompletableFuture().get(5, SECONDS))
        .isInstanceOf(ExecutionException.class).hasMessageContaining("expected: a sku of 1..64 characters");
  }

  @Test
  void anOlderActivationCannotWriteOnceANewerOneClaimedTheCart(LocalCluster cluster) throws Exception {
    EntityRef<CartMsg> cart = cluster.pods().get(0).entity(Cart.TYPE, "carol");
    assertThat(cart.<Integer>ask(r -> new CartMsg.Add("tea", 1, r)).toCompletableFuture().get(5, SECONDS))
        .isEqualTo(1);
    // An activation newer than any this cluster has handed out claims carol's cart elsewhere.
    store().claim(Cart.TYPE.name(), "carol", new FencingToken(0, Long.MAX_VALUE / 2));
    assertThatThrownBy(() -> cart.<Integer>ask(r -> new CartMsg.Add("tea", 99, r)).toCompletableFuture()
        .get(5, SECONDS)).isInstanceOf(ExecutionException.class).hasMessageContaining("newer than this activation's");
    assertThat(store().claim(Cart.TYPE.name(), "carol", new FencingToken(0, Long.MAX_VALUE / 2)).revision())
        .isEqualTo(1);
  }
}
