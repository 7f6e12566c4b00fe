/**
 * The floor of the pod: small tools every room uses and that use no room. The settings and the
 * context (settings, clock, scheduler) each room is built with, the pod's timer, the one back-off
 * policy, the drain that runs a stream's writes on its event loop, and the {@link
 * io.atoll.runtime.internal.util.GuardedBy} annotation. Imports nothing from the runtime but its
 * API's value types.
 *
 * <p>Not API: internal to atoll-runtime, may change in any release.
 */
package io.atoll.runtime.internal.util;
