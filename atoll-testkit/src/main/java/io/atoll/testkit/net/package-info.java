/**
 * API: {@link io.atoll.testkit.net.TcpRelay}, a TCP relay on loopback that refuses, black-holes,
 * stalls or cuts one direction of the connections through it, to put network faults between real
 * endpoints.
 */
package io.atoll.testkit.net;
