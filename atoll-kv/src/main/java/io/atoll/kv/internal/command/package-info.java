/**
 * The command table and the commands: parsing of arguments with Redis' error texts, routing of
 * keyed commands by slot (MOVED, ASK, TRYAGAIN, CROSSSLOT, CLUSTERDOWN), and execution under the
 * slot's lock. Not API.
 */
package io.atoll.kv.internal.command;
