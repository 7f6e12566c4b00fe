/**
 * API: {@link io.atoll.testkit.history.Linearizability}, a checker of recorded histories against a
 * sequential {@link io.atoll.testkit.history.Model} (Wing and Gong's search with Lowe's cache of
 * visited configurations), and {@link io.atoll.testkit.history.RedisKey}, the model of one Redis
 * key under SET, GET and INCR.
 */
package io.atoll.testkit.history;
