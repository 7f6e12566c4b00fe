/**
 * RESP, Redis' wire protocol: a bounded decoder of client requests ({@link
 * io.atoll.kv.internal.resp.RespDecoder}) and the reply writer ({@link
 * io.atoll.kv.internal.resp.Reply}) for RESP2 and RESP3. Not API.
 */
package io.atoll.kv.internal.resp;
