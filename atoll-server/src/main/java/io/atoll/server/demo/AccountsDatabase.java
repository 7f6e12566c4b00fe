package io.atoll.server.demo;

import java.nio.file.Path;
import java.sql.SQLException;
import org.h2.tools.Server;

/**
 * The accounts database of a demo or chaos run: an H2 server on 127.0.0.1 (an ephemeral port),
 * its files in one directory, with the schema of {@link AccountDb} created. Closing stops it.
 */
public final class AccountsDatabase implements AutoCloseable {

  private final Server server;
  private final String url;

  private AccountsDatabase(Server server, String url) {
    this.server = server;
    this.url = url;
  }

  /** Starts the server with its files under {@code dir} and creates the schema. */
  public static AccountsDatabase start(Path dir) throws SQLException {
    System.setProperty("h2.bindAddress", "127.0.0.1");
    Server s = Server.createTcpServer("-tcpPort", "0", "-ifNotExists", "-baseDir",
        dir.toAbsolutePath().toString()).start();
    String url = "jdbc:h2:tcp://127.0.0.1:" + s.getPort() + "/accounts";
    try {
      AccountDb.createSchema(url);
    } catch (SQLException e) {
      s.stop();
      throw e;
    }
    return new AccountsDatabase(s, url);
  }

  /** The JDBC URL pods and the audit use. */
  public String url() {
    return url;
  }

  @Override
  public void close() {
    server.stop();
  }
}
