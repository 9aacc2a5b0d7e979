package dev.pgworkflows.bench;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;

/** The benchmark's command line, parsed without running anything. */
class OptionsTest {
  private final ByteArrayOutputStream out = new ByteArrayOutputStream();
  private final ByteArrayOutputStream err = new ByteArrayOutputStream();

  private Options.Outcome read(String... args) {
    return Options.read(
        args,
        new PrintStream(out, true, StandardCharsets.UTF_8),
        new PrintStream(err, true, StandardCharsets.UTF_8));
  }

  @Test
  void helpPrintsTheUsageAndExitsZero() {
    for (String help : new String[] {"--help", "-h"}) {
      out.reset();
      Options.Outcome o = read("--quick", help);
      assertThat(o.options()).isNull();
      assertThat(o.exitStatus()).isZero();
      assertThat(out.toString(StandardCharsets.UTF_8))
          .startsWith("Usage: ")
          .contains(
              "--quick",
              "--reps N",
              "--runs N",
              "--system NAME",
              "--out FILE",
              "--fan-out",
              "--help");
    }
    assertThat(err.size()).isZero();
  }

  @Test
  void anUnknownOptionIsNamedWithTheUsageAndExitsTwo() {
    Options.Outcome o = read("--quick", "--nope");
    assertThat(o.options()).isNull();
    assertThat(o.exitStatus()).isEqualTo(2);
    assertThat(err.toString(StandardCharsets.UTF_8))
        .startsWith("bench: unknown option: --nope")
        .contains("Usage: ");
    assertThat(out.size()).isZero();
    assertThatThrownBy(() -> Options.parse("stray"))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage("unexpected argument: stray");
  }

  @Test
  void missingAndBadValuesAreRefused() {
    assertThatThrownBy(() -> Options.parse("--reps"))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage("--reps needs a value");
    assertThatThrownBy(() -> Options.parse("--runs", "many"))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("--runs");
    assertThatThrownBy(() -> Options.parse("--reps", "0"))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("--reps");
    assertThatThrownBy(() -> Options.parse("--system", "temporal"))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("temporal");
    assertThat(read("--out").exitStatus()).isEqualTo(2);
  }

  @Test
  void everyOptionIsRead() {
    Options none = Options.parse();
    assertThat(none)
        .isEqualTo(
            new Options(
                false, false, null, null, null, Path.of("bench-results.json"), false, false));

    Options.Outcome o =
        read(
            "--quick",
            "--reps",
            "3",
            "--runs",
            "10000",
            "--system",
            "dbos",
            "--out",
            "r.json",
            "--fan-out");
    assertThat(o.exitStatus()).isZero();
    assertThat(o.options())
        .isEqualTo(new Options(false, true, 3, 10_000, "DBOS", Path.of("r.json"), true, false));
    assertThat(Options.parse("--system", "pgworkflows").system()).isEqualTo("pgworkflows");
    assertThat(out.size() + err.size()).isZero();
  }
}
