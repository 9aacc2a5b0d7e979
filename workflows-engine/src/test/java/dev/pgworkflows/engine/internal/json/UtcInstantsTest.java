package dev.pgworkflows.engine.internal.json;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.fasterxml.jackson.databind.JsonMappingException;
import java.time.Instant;
import java.time.format.DateTimeFormatter;
import java.time.temporal.ChronoUnit;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

class UtcInstantsTest {
  record Timed(Instant at) {}

  private static Instant read(String json) throws Exception {
    return Json.MAPPER.readValue("{\"at\": " + json + "}", Timed.class).at();
  }

  @Test
  void readsWhatInstantWritesAsInstantParseDoes() {
    SplittableRandom random = new SplittableRandom(7);
    for (int i = 0; i < 20_000; i++) {
      long seconds = random.nextLong(-62_135_596_800L, 253_402_300_799L); // years 1 to 9999
      int nanos = random.nextInt(1_000_000_000);
      Instant t = Instant.ofEpochSecond(seconds, nanos);
      // Instant.toString writes 0, 3, 6 or 9 digits; the truncations give every other count.
      for (ChronoUnit unit :
          new ChronoUnit[] {ChronoUnit.SECONDS, ChronoUnit.MILLIS, ChronoUnit.MICROS}) {
        String s = t.truncatedTo(unit).toString();
        assertThat(UtcInstants.parse(s)).as(s).isEqualTo(Instant.parse(s));
      }
      String s = t.toString();
      assertThat(UtcInstants.parse(s)).as(s).isEqualTo(Instant.parse(s));
      if (s.length() > 21) {
        int places = s.length() - 21; // the fraction's digits
        String trimmed = s.substring(0, 21 + random.nextInt(places)) + "Z"; // 1 to places digits
        assertThat(UtcInstants.parse(trimmed)).as(trimmed).isEqualTo(Instant.parse(trimmed));
      }
    }
  }

  @ParameterizedTest
  @ValueSource(
      strings = {
        "2026-11-25T06:11:08+01:00",
        "2026-11-25t06:11:08z",
        "2026-11-25T24:00:00Z",
        "2026-12-31T23:59:60Z",
        "2026-11-25T06:11:08.Z",
        "2026-11-25T06:11:08.1234567890Z",
        "2026-02-30T06:11:08Z",
        "2026-13-01T06:11:08Z",
        "2026-11-25T06:61:08Z",
        "2026-11-25 06:11:08Z",
        "+2026-11-25T06:11:08Z",
        "2026-11-25T06:11:0xZ",
        "２０２６-11-25T06:11:08Z"
      })
  void leavesEveryOtherShapeToTheGeneralParser(String s) {
    assertThat(UtcInstants.parse(s)).isNull();
  }

  @Test
  void theGeneralParserStillDecidesWhatTheFastPathLeaves() throws Exception {
    assertThat(read("\"2026-11-25T06:11:08+01:00\""))
        .isEqualTo(Instant.parse("2026-11-25T05:11:08Z"));
    assertThat(read("\"2026-11-25t06:11:08z\"")).isEqualTo(Instant.parse("2026-11-25T06:11:08Z"));
    assertThat(read("\"2026-11-25T06:11:08.5Z\""))
        .isEqualTo(Instant.parse("2026-11-25T06:11:08.500Z"));
    // A point with no digits after it: the general parser's call, as it always was.
    assertThat(read("\"2026-11-25T06:11:08.Z\"")).isEqualTo(Instant.parse("2026-11-25T06:11:08Z"));
    assertThat(read("1764051068")).isEqualTo(Instant.ofEpochSecond(1_764_051_068L));
    assertThat(read("null")).isNull();
    for (String bad :
        new String[] {
          "\"2026-02-30T06:11:08Z\"", "\"2026-11-25T06:61:08Z\"", "\"yesterday\"", "true"
        }) {
      assertThatThrownBy(() -> read(bad)).as(bad).isInstanceOf(JsonMappingException.class);
    }
    String now = DateTimeFormatter.ISO_INSTANT.format(Instant.now());
    assertThat(read("\"" + now + "\"")).isEqualTo(Instant.parse(now));
  }
}
