/**
 * Mutual TLS for every Atoll gRPC connection: {@link io.atoll.transport.grpc.security.WireSecurity}
 * (PEM files, reloaded when they change), the roles a certificate carries
 * ({@link io.atoll.transport.grpc.security.Role}: {@code atoll:manager}, {@code atoll:pod:NAME},
 * {@code atoll:admin:NAME} as subject alternative name URIs), and the server-side access policy
 * ({@link io.atoll.transport.grpc.security.AccessPolicy}) with its interceptor, which logs each refused
 * peer once. Internal to Atoll's modules.
 */
package io.atoll.transport.grpc.security;
