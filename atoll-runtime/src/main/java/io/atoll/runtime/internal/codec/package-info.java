/**
 * Internal codec bits: the default record codec (Apache Fory limited to an entity type's declared
 * classes), the binding of reply handles while a message is decoded, the handle that answers
 * nobody, and the mapping of failure reasons to wire codes. Uses no room of the pod: the reply
 * handle classes are passed in by whoever builds a codec.
 *
 * <p>Not API: internal to atoll-runtime (the API codecs are in {@code io.atoll.runtime.codec}).
 */
package io.atoll.runtime.internal.codec;
