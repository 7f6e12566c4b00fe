package io.atoll.examples.carts;

import io.atoll.runtime.Reply;
import java.util.Map;

/** What a cart understands. */
public sealed interface CartMsg permits CartMsg.Add, CartMsg.Remove, CartMsg.Get, CartMsg.Checkout {

  /** Adds {@code quantity} of {@code sku}; answers the cart's new item count. */
  record Add(String sku, int quantity, Reply<Integer> reply) implements CartMsg {}

  /** Removes every {@code sku}. */
  record Remove(String sku) implements CartMsg {}

  /** Answers the items, sku to quantity. */
  record Get(Reply<Map<String, Integer>> reply) implements CartMsg {}

  /** Empties the cart; answers how many items were checked out. */
  record Checkout(Reply<Integer> reply) implements CartMsg {}
}
