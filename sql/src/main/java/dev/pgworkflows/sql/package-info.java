/**
 * The schema and its functions, as shipped: {@link dev.pgworkflows.sql.Migrator} brings a database
 * to them (forward-only migrations, then every function file), under one advisory lock so that
 * several processes may start at once.
 */
package dev.pgworkflows.sql;
