/**
 * Certificates for tests and first steps: {@link io.atoll.testkit.tls.DevCa} creates a development
 * CA and the manager, pod and admin certificates of a cluster (what {@code atoll certs} writes).
 */
package io.atoll.testkit.tls;
