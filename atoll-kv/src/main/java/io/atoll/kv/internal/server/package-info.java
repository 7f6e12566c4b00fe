/** The client side of the network: one Netty handler per connection. Not API. */
package io.atoll.kv.internal.server;
