/**
 * The gRPC transport: internal to Atoll's modules, not a user API.
 *
 * <p>{@link io.atoll.transport.grpc.Wire} holds the conversions between atoll-core's model and the
 * wire messages (validating every field read, failing with {@code INVALID_ARGUMENT}), the one way
 * Atoll opens channels and servers (shared transport event loops, message size limit, keep-alive),
 * the reset of a failing channel's connect back-off, and the TCP probe the lease keeper uses to
 * tell a stopped manager from an unreachable one. The runtime, the manager and the server depend
 * on it; it depends on atoll-core only.
 */
package io.atoll.transport.grpc;
