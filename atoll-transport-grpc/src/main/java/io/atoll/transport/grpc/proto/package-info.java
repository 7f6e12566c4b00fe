/**
 * The wire messages and service stubs generated from {@code atoll.proto}: internal to Atoll's
 * modules, not a user API. Generated in the build, never edited by hand; see {@code atoll.proto}
 * for what each message and call means.
 */
package io.atoll.transport.grpc.proto;
