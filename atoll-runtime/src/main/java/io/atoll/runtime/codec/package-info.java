/**
 * Message codecs: the {@link io.atoll.runtime.codec.MessageCodec} interface an entity type may
 * bring, the {@link io.atoll.runtime.codec.DefaultCodec} every type gets otherwise, and {@link
 * io.atoll.runtime.codec.ProtobufCodec} for protobuf messages.
 *
 * <p>API.
 */
package io.atoll.runtime.codec;
