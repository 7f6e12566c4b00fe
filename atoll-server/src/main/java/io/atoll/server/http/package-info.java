/**
 * The HTTP face of {@code atoll manager}, {@code atoll pod} and {@code atoll kv} ({@code
 * --http-port}): Prometheus metrics, health probes, the cluster as JSON and the manager's live
 * dashboard, on the JDK's {@code com.sun.net.httpserver}. Not API.
 */
package io.atoll.server.http;
