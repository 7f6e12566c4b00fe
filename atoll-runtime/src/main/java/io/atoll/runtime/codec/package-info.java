/**
 * Message codecs: the {@link io.atoll.runtime.codec.MessageCodec} interface an entity type may
 * bring and {@link io.atoll.runtime.codec.ProtobufCodec} for protobuf messages ({@link
 * io.atoll.runtime.DefaultCodec} gives the codec a pod uses for a type). A leaf: it imports
 * nothing of the rest of the runtime.
 *
 * <p>API.
 */
package io.atoll.runtime.codec;
