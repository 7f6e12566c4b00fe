package io.atoll.examples.carts;

import io.atoll.runtime.Entity;
import io.atoll.runtime.EntityContext;
import io.atoll.runtime.EntityType;
import java.util.Map;
import java.util.TreeMap;

/**
 * A shopping cart: an Atoll entity, alive in exactly one pod, whose state is in the database. It
 * claims its row with its fencing token on its first message and saves after every change.
 */
public final class Cart implements Entity<CartMsg> {

  /** The entity type every pod of the service registers. */
  public static final EntityType<CartMsg> TYPE = EntityType.of("cart", CartMsg.class);

  /** Skus and quantities are bounded, as everything at a boundary should be. */
  static final int MAX_SKU_LENGTH = 64;
  static final int MAX_LINES = 200;

  private final CartStore store;
  private Map<String, Integer> items;

  /** A cart kept in {@code store}. */
  public Cart(CartStore store) {
    this.store = store;
  }

  @Override
  public void onMessage(CartMsg msg, EntityContext ctx) throws Exception {
    if (items == null) {
      items = new TreeMap<>(store.claim(ctx.entityId(), ctx.token()));
    }
    switch (msg) {
      case CartMsg.Add a -> {
        if (a.sku().isEmpty() || a.sku().length() > MAX_SKU_LENGTH || a.sku().contains("=")
            || a.sku().contains("\n") || a.quantity() <= 0) {
          a.reply().fail("add: sku '" + a.sku() + "' x " + a.quantity()
              + " (expected: a sku of 1.." + MAX_SKU_LENGTH + " characters without '=' and a quantity > 0)");
          return;
        }
        if (!items.containsKey(a.sku()) && items.size() >= MAX_LINES) {
          a.reply().fail("add: the cart has " + MAX_LINES + " lines already (expected: fewer)");
          return;
        }
        items.merge(a.sku(), a.quantity(), Math::addExact);
        store.save(ctx.entityId(), ctx.token(), items);
        a.reply().send(count());
      }
      case CartMsg.Remove r -> {
        if (items.remove(r.sku()) != null) {
          store.save(ctx.entityId(), ctx.token(), items);
        }
      }
      case CartMsg.Get g -> g.reply().send(new TreeMap<>(items));
      case CartMsg.Checkout c -> {
        int n = count();
        items.clear();
        store.save(ctx.entityId(), ctx.token(), items);
        c.reply().send(n);
      }
    }
  }

  private int count() {
    return items.values().stream().mapToInt(Integer::intValue).sum();
  }
}
