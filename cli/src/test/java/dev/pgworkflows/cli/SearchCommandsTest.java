package dev.pgworkflows.cli;

import static org.assertj.core.api.Assertions.assertThat;

import dev.pgworkflows.server.TestServer;
import dev.pgworkflows.server.testing.ServerOnFreshDatabase;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * {@code pgw attributes}, {@code pgw runs search}, {@code pgw runs count} and {@code pgw runs
 * attributes}: attributes defined, runs started with them and found by a query; a query with a
 * syntax error exits 1 with the position, and changes nothing.
 */
class SearchCommandsTest {
  @RegisterExtension static final ServerOnFreshDatabase server = ServerOnFreshDatabase.start();

  private final Cli pgw = new Cli(server::url, TestServer.TOKEN);

  @Test
  void runsStartedWithAttributesAreFoundAndCounted() {
    assertThat(pgw.ok("attributes", "define", "customer", "text").out())
        .contains("customer (text): defined");
    assertThat(pgw.ok("attributes", "define", "amount", "number").out()).contains("defined");
    assertThat(pgw.ok("attributes").out())
        .containsPattern("(?m)^amount +number")
        .containsPattern("(?m)^customer +text");

    pgw.ok("runs", "start", "invoice", "--attributes", "{\"customer\": \"acme\", \"amount\": 250}");
    pgw.ok("runs", "start", "invoice", "--attributes", "{\"customer\": \"globex\", \"amount\": 9}");
    Cli.Result found = pgw.ok("runs", "search", "customer = 'acme' AND amount > 100");
    assertThat(found.lines().get(0)).startsWith("WORKFLOW").contains("RUN", "STATUS");
    assertThat(found.lines()).hasSize(2);
    assertThat(found.lines().get(1)).containsPattern("^invoice +1 +running");
    assertThat(pgw.ok("runs", "count", "workflow = 'invoice'").out().strip()).isEqualTo("2");

    Cli.Result set = pgw.ok("runs", "attributes", "invoice", "2", "--set", "customer=initech");
    assertThat(set.out()).containsPattern("(?m)^customer +initech");
    assertThat(pgw.ok("runs", "attributes", "invoice", "2").out())
        .containsPattern("(?m)^amount +9");

    Cli.Result bad = pgw.run("runs", "search", "customer = 'acme' OR");
    assertThat(bad.exit()).isEqualTo(1);
    assertThat(bad.err()).contains("query at 21: expected a field");
    Cli.Result wrongType = pgw.run("runs", "attributes", "invoice", "1", "--set", "amount=lots");
    assertThat(wrongType.exit()).isEqualTo(1);
    assertThat(wrongType.err()).contains("attributes.amount is a number attribute");
    assertThat(pgw.ok("runs", "count", "amount = 250").out().strip()).isEqualTo("1");
  }
}
