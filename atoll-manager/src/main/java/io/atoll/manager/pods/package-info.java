/**
 * The manager's port to the pods: {@link io.atoll.manager.pods.Pods}, what the manager asks of a
 * pod (ping, unassign, push a config), and {@link io.atoll.manager.pods.GrpcPods}, its gRPC
 * implementation. Tests put fake pods behind the same interface.
 *
 * <p>Internal to the shard manager: not API, may change without notice. Imports atoll-core and
 * the transport only.
 */
package io.atoll.manager.pods;
