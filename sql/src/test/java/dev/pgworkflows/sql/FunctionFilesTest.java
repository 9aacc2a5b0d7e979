package dev.pgworkflows.sql;

import static org.assertj.core.api.Assertions.assertThat;

import dev.pgworkflows.testing.TestDatabase;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;

/** The files of sql/functions/ are the one source of the database's functions. */
class FunctionFilesTest {
  private static final Pattern DEFINITION =
      Pattern.compile(
          "CREATE OR REPLACE FUNCTION queue\\.(\\w+)\\((.*?)\\$\\$(.*?)\\$\\$;", Pattern.DOTALL);

  @Test
  void everyFunctionOfTheDatabaseIsDefinedOnceInTheFilesWithTheSameBody() throws Exception {
    List<String> inFiles = new ArrayList<>();
    for (FunctionFile f : FunctionFile.shipped()) {
      Matcher m = DEFINITION.matcher(f.sql());
      while (m.find()) {
        inFiles.add(m.group(1) + " " + m.group(3));
      }
    }
    List<String> inDatabase = new ArrayList<>();
    try (Connection c = TestDatabase.fresh().connect();
        Statement s = c.createStatement();
        ResultSet rs =
            s.executeQuery(
                "SELECT proname || ' ' || prosrc FROM pg_proc"
                    + " WHERE pronamespace = 'queue'::regnamespace")) {
      while (rs.next()) {
        inDatabase.add(rs.getString(1));
      }
    }
    assertThat(inFiles).doesNotHaveDuplicates();
    assertThat(inDatabase).containsExactlyInAnyOrderElementsOf(inFiles);
  }

  @Test
  void theFilesHoldOnlyFunctionDefinitionsOfSchemaQueue() {
    for (FunctionFile f : FunctionFile.shipped()) {
      String code =
          f.sql()
              .replaceAll("(?s)\\$\\$.*?\\$\\$", "\\$\\$\\$\\$")
              .replaceAll("(?m)^\\s*--.*$", "");
      for (String statement : code.split(";")) {
        statement = statement.strip();
        if (!statement.isEmpty()) {
          assertThat(statement)
              .as(f.fileName())
              .matches(
                  "(?s)(CREATE OR REPLACE FUNCTION|DROP FUNCTION IF EXISTS) queue\\..*"
                      + "|CREATE OR REPLACE TRIGGER \\w+\\s+.*? ON queue\\..*");
        }
      }
    }
  }
}
