package dev.pgworkflows.protocol;

import static org.assertj.core.api.Assertions.assertThat;

import dev.pgworkflows.protocol.SqlStates.Failure;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Set;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;

class SqlStatesTest {
  @Test
  void eachStateHasOneMeaningAndItsStatus() {
    assertThat(SqlStates.of("22023")).isEqualTo(Failure.BAD_INPUT);
    assertThat(SqlStates.of("23514")).as("a row rule a field broke").isEqualTo(Failure.BAD_INPUT);
    assertThat(SqlStates.of("P0002")).isEqualTo(Failure.NOT_FOUND);
    assertThat(SqlStates.of("42P01")).as("a queue's table dropped").isEqualTo(Failure.NOT_FOUND);
    assertThat(SqlStates.of("WF003")).isEqualTo(Failure.CONFLICT);
    assertThat(SqlStates.of("42883")).isEqualTo(Failure.SCHEMA);
    assertThat(SqlStates.of("40P01")).isEqualTo(Failure.UNAVAILABLE);
    assertThat(SqlStates.of("53100")).isEqualTo(Failure.UNAVAILABLE);
    assertThat(SqlStates.of("08006")).isEqualTo(Failure.UNAVAILABLE);
    assertThat(SqlStates.of("XX000")).isEqualTo(Failure.OTHER);
    assertThat(SqlStates.of(null)).isEqualTo(Failure.OTHER);
    assertThat(Failure.BAD_INPUT.status()).isEqualTo(400);
    assertThat(Failure.SCHEMA.status()).isEqualTo(500);
    assertThat(Failure.UNAVAILABLE.status()).isEqualTo(503);
  }

  @Test
  void everyStateTheFunctionsRaiseHasAMeaning() throws IOException {
    Pattern errcode = Pattern.compile("ERRCODE = '([0-9A-Z]{5})'");
    Set<String> raised = new TreeSet<>();
    try (Stream<Path> files = Files.list(Path.of("../sql/functions"))) {
      for (Path f : files.filter(p -> p.toString().endsWith(".sql")).toList()) {
        Matcher m = errcode.matcher(Files.readString(f));
        while (m.find()) {
          raised.add(m.group(1));
        }
      }
    }
    assertThat(raised).as("states raised in sql/functions").contains("22023", "P0002", "WF001");
    assertThat(raised).allMatch(s -> SqlStates.of(s) != Failure.OTHER, "has a meaning");
  }
}
