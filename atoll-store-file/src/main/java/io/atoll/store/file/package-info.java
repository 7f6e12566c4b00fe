/**
 * The embedded default assignment store, one file in a data directory: API (the manager and
 * tools open it by directory).
 *
 * <p>{@link io.atoll.store.file.FileAssignmentStore} implements
 * {@link io.atoll.core.spi.AssignmentStore}: a save writes a checksummed temporary file, forces
 * it, renames it over the state and forces the directory; one process at a time holds the
 * directory's lock.
 */
package io.atoll.store.file;
