/**
 * Durable entities' state in a SQL database through JDBC: {@link io.atoll.state.jdbc.JdbcStateStore},
 * over the caller's {@link javax.sql.DataSource}.
 */
package io.atoll.state.jdbc;
