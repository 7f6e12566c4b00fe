/**
 * API: the JUnit 5 extension that gives each test a fresh {@link io.atoll.testkit.LocalCluster}
 * ({@link io.atoll.testkit.junit.AtollCluster} or {@link io.atoll.testkit.junit.AtollClusterExtension}).
 * The only package that needs JUnit, which the testkit declares optional: a test has it already.
 */
package io.atoll.testkit.junit;
