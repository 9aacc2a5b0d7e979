/**
 * The wire: the JSON records the server and the SDK exchange (tasks, completions, starts, runs,
 * problems), and the rules both ends share: the naming rules ({@link
 * dev.pgworkflows.protocol.Names}) and the meaning of each SQLSTATE ({@link
 * dev.pgworkflows.protocol.SqlStates}).
 */
package dev.pgworkflows.protocol;
