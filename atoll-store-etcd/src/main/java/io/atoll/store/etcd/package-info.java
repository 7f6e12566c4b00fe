/**
 * The assignment store in etcd, through jetcd: API ({@link io.atoll.store.etcd.EtcdAssignmentStore}
 * and its connection options, {@link io.atoll.store.etcd.EtcdStoreOptions}, parsed from an
 * {@code etcd://} or {@code etcds://} URI).
 *
 * <p>A save is one transaction that compares the state key's version and the term key's value;
 * the leadership is a key attached to an etcd lease, put in a transaction that also raises the
 * term; watches follow the state key.
 */
package io.atoll.store.etcd;
