/**
 * API: the harness for clusters of real processes. A {@link io.atoll.testkit.process.ProcessSpec}
 * says what to run (Java binary, class path, main class, arguments); a
 * {@link io.atoll.testkit.process.ProcessCluster} starts specs, logs each to a file and stops them
 * together; a {@link io.atoll.testkit.process.ManagedProcess} is one of them, to be killed,
 * frozen, thawed or stopped gracefully. Independent of the {@code atoll} command: the server, the
 * demo and the load generator build their own specs.
 */
package io.atoll.testkit.process;
