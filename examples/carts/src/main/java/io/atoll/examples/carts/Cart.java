package io.atoll.examples.carts;

import io.atoll.core.spi.StateStore;
import io.atoll.core.spi.StateStoreException;
import io.atoll.runtime.Durable;
import io.atoll.runtime.DurableContext;
import io.atoll.runtime.DurableEntity;
import io.atoll.runtime.EntityFactory;
import io.atoll.runtime.EntityType;
import java.util.Map;
import java.util.TreeMap;

/**
 * A shopping cart: an Atoll entity, alive in exactly one pod, whose items Atoll keeps in a state
 * store. Each activation reads them under its fencing token, and each change is saved before it is
 * answered, so a cart keeps its items when it moves to another pod, when its pod crashes, and when
 * it is passivated; and an older activation (a pod cut off, then back) can never overwrite them.
 */
public final class Cart implements DurableEntity<CartMsg, Cart.Items> {

  /** The entity type every pod of the service registers. */
  public static final EntityType<CartMsg> TYPE = EntityType.of("cart", CartMsg.class);

  /** Skus and quantities are bounded, as everything at a boundary should be. */
  static final int MAX_SKU_LENGTH = 64;
  static final int MAX_LINES = 200;

  /** A cart's state: sku to quantity. A value: each change makes a new one. */
  public record Items(TreeMap<String, Integer> lines) {
    static final Items EMPTY = new Items(new TreeMap<>());

    Items with(String sku, int quantity) {
      TreeMap<String, Integer> l = new TreeMap<>(lines);
      l.merge(sku, quantity, Math::addExact);
      return new Items(l);
    }

    Items without(String sku) {
      TreeMap<String, Integer> l = new TreeMap<>(lines);
      l.remove(sku);
      return new Items(l);
    }

    int count() {
      return lines.values().stream().mapToInt(Integer::intValue).sum();
    }
  }

  /** The factory to register carts with, their state kept in {@code store}. */
  public static EntityFactory<CartMsg> in(StateStore store) {
    return Durable.entity(store, Items.class, Items.EMPTY, new Cart());
  }

  @Override
  public void onMessage(CartMsg msg, DurableContext<Items> ctx) throws StateStoreException {
    switch (msg) {
      case CartMsg.Add a -> {
        if (a.sku().isEmpty() || a.sku().length() > MAX_SKU_LENGTH || a.quantity() <= 0) {
          a.reply().fail("add: sku '" + a.sku() + "' x " + a.quantity()
              + " (expected: a sku of 1.." + MAX_SKU_LENGTH + " characters and a quantity > 0)");
          return;
        }
        if (!ctx.state().lines().containsKey(a.sku()) && ctx.state().lines().size() >= MAX_LINES) {
          a.reply().fail("add: the cart has " + MAX_LINES + " lines already (expected: fewer)");
          return;
        }
        ctx.setState(ctx.state().with(a.sku(), a.quantity()));
        ctx.persist(); // saved before the answer says so
        a.reply().send(ctx.state().count());
      }
      case CartMsg.Remove r -> {
        if (ctx.state().lines().containsKey(r.sku())) {
          ctx.setState(ctx.state().without(r.sku())); // saved when the handler returns
        }
      }
      case CartMsg.Get g -> g.reply().send(Map.copyOf(ctx.state().lines()));
      case CartMsg.Checkout c -> {
        int n = ctx.state().count();
        ctx.setState(Items.EMPTY);
        ctx.persist();
        c.reply().send(n);
      }
    }
  }
}
