package io.atoll.state.jdbc;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Duration;
import org.h2.jdbcx.JdbcDataSource;
import org.junit.jupiter.api.Test;

/** What {@link JdbcStateStore#open} refuses, before it touches the database. */
class JdbcStateStoreArgumentsTest {

  private static JdbcDataSource memory() {
    JdbcDataSource ds = new JdbcDataSource();
    ds.setURL("jdbc:h2:mem:arguments");
    return ds;
  }

  @Test
  void aTableNameThatIsNotAPlainIdentifierIsRefusedWithTheExpectedForm() {
    for (String bad : new String[] {"", "1state", "state; DROP TABLE x", "a-b", "x".repeat(64), "\"quoted\""}) {
      assertThatThrownBy(() -> JdbcStateStore.open(memory(), bad, Duration.ofSeconds(5)))
          .isInstanceOf(IllegalArgumentException.class)
          .hasMessageContaining("table '" + bad + "'")
          .hasMessageContaining("expected: 1..63 of letters, digits and '_'");
    }
  }

  @Test
  void aTimeoutUnderASecondIsRefused() {
    assertThatThrownBy(() -> JdbcStateStore.open(memory(), "state", Duration.ofMillis(500)))
        .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("timeout PT0.5S (expected: at least 1 s)");
  }

  @Test
  void theRowKeyTellsApartTypesAndIdsThatConcatenateAlike() {
    assertThat(JdbcStateStore.key("a", "b:c")).isNotEqualTo(JdbcStateStore.key("a:b", "c")).hasSize(64);
  }
}
