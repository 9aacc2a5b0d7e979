/**
 * The server: {@link dev.pgworkflows.server.QueueServer}, one host of the engine, with the REST
 * API, task streams, long polls, the dashboard, metrics and tracing; configured from the
 * environment ({@link dev.pgworkflows.server.ServerConfig}, {@link dev.pgworkflows.server.Main}).
 */
package dev.pgworkflows.server;
