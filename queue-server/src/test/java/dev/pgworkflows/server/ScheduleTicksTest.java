package dev.pgworkflows.server;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import dev.pgworkflows.server.testing.SettableClock;
import dev.pgworkflows.testing.TestDatabase;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Predicate;
import org.junit.jupiter.api.Test;

/**
 * The ticker of real servers, their clocks moved by hand: a tick starts exactly one run (also with
 * two servers on one database), whose input carries the tick; after downtime each catch-up policy
 * starts what it says; ticks follow the schedule's zone across daylight-saving changes.
 */
class ScheduleTicksTest {
  private static final Map<String, String> FAST = Map.of("WORKFLOWS_SCHEDULE_INTERVAL_MS", "20");

  private static Map<String, Object> schedule(String name, String cron, Object... more) {
    Map<String, Object> body = new HashMap<>();
    body.put("name", name);
    body.put("workflow", name);
    body.put("cron", cron);
    for (int i = 0; i < more.length; i += 2) {
      body.put((String) more[i], more[i + 1]);
    }
    return body;
  }

  /** The runs of a workflow, oldest first. */
  private static List<JsonNode> runs(Api api, String workflow) {
    List<JsonNode> out = new ArrayList<>();
    api.get("/v1/workflows/" + workflow + "/runs?limit=1000").json().get("runs").forEach(out::add);
    java.util.Collections.reverse(out);
    return out;
  }

  private static List<String> ticksOf(Api api, String workflow) {
    return runs(api, workflow).stream()
        .map(r -> r.get("input").get("scheduledAt").asText())
        .toList();
  }

  /** Waits until the schedule's state satisfies {@code done}. */
  private static JsonNode awaitSchedule(Api api, String name, Predicate<JsonNode> done) {
    long deadline = System.nanoTime() + Duration.ofSeconds(20).toNanos();
    while (System.nanoTime() < deadline) {
      JsonNode s = api.get("/v1/schedules/" + name).json();
      if (done.test(s)) {
        return s;
      }
      sleep(10);
    }
    throw new AssertionError("schedule " + name + " did not get there");
  }

  private static Predicate<JsonNode> nextTickAfter(Instant t) {
    return s -> s.has("nextTick") && Instant.parse(s.get("nextTick").asText()).isAfter(t);
  }

  private static void sleep(long ms) {
    try {
      Thread.sleep(ms);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException(e);
    }
  }

  @Test
  void eachTickStartsOneRunWhoseInputCarriesTheTickEvenWithTwoServersTicking() {
    SettableClock clock = new SettableClock(Instant.parse("2026-03-02T10:30:00Z"));
    TestDatabase db = TestDatabase.fresh();
    try (TestServer a = TestServer.start(db, FAST, clock);
        TestServer b = TestServer.start(db, FAST, clock)) {
      Api api = a.api();
      Api.Response made =
          api.post("/v1/schedules", schedule("hourly", "0 * * * *", "input", Map.of("to", "ops")));
      assertThat(made.status()).as(made.body()).isEqualTo(201);
      for (int hour = 11; hour <= 14; hour++) {
        Instant tick = Instant.parse("2026-03-02T" + hour + ":00:00Z");
        clock.set(tick.plusSeconds(1));
        awaitSchedule(api, "hourly", nextTickAfter(tick));
        // Both tickers get another pass or two at this time: they must start nothing more.
        sleep(100);
      }
      List<JsonNode> runs = runs(b.api(), "hourly");
      assertThat(ticksOf(api, "hourly"))
          .containsExactly(
              "2026-03-02T11:00:00Z",
              "2026-03-02T12:00:00Z",
              "2026-03-02T13:00:00Z",
              "2026-03-02T14:00:00Z");
      assertThat(runs.get(0).get("input").get("to").asText()).isEqualTo("ops");
      assertThat(runs.get(0).get("idempotencyKey").asText())
          .isEqualTo("__schedule/hourly/2026-03-02T11:00:00Z");
      JsonNode s = api.get("/v1/schedules/hourly").json();
      assertThat(s.get("lastTick").asText()).isEqualTo("2026-03-02T14:00:00Z");
      assertThat(s.get("nextTick").asText()).isEqualTo("2026-03-02T15:00:00Z");
    }
  }

  @Test
  void afterDowntimeSkipRunsNothingLatestTheNewestTickAndAllEachMissedTick() {
    SettableClock clock = new SettableClock(Instant.parse("2026-03-02T10:30:00Z"));
    try (TestServer server = TestServer.start(TestDatabase.fresh(), FAST, clock)) {
      Api api = server.api();
      for (String policy : List.of("skip", "latest", "all")) {
        assertThat(
                api.post(
                        "/v1/schedules", schedule("down-" + policy, "0 * * * *", "catchUp", policy))
                    .status())
            .isEqualTo(201);
      }
      Map<String, Object> bounded = schedule("down-bounded", "0 * * * *", "catchUp", "all");
      bounded.put("maxCatchUp", 3);
      assertThat(api.post("/v1/schedules", bounded).status()).isEqualTo(201);
      Map<String, Object> array = schedule("down-array", "0 * * * *", "catchUp", "latest");
      array.put("input", List.of(1, 2));
      assertThat(api.post("/v1/schedules", array).status()).isEqualTo(201);

      // Down across five ticks (11:00 to 15:00): the ticker next runs at 15:30.
      Instant now = Instant.parse("2026-03-02T15:30:00Z");
      clock.set(now);
      for (String name :
          List.of("down-skip", "down-latest", "down-all", "down-bounded", "down-array")) {
        JsonNode s = awaitSchedule(api, name, nextTickAfter(now));
        assertThat(s.get("nextTick").asText()).isEqualTo("2026-03-02T16:00:00Z");
      }
      assertThat(runs(api, "down-skip")).isEmpty();
      assertThat(ticksOf(api, "down-latest")).containsExactly("2026-03-02T15:00:00Z");
      assertThat(ticksOf(api, "down-all"))
          .containsExactly(
              "2026-03-02T11:00:00Z",
              "2026-03-02T12:00:00Z",
              "2026-03-02T13:00:00Z",
              "2026-03-02T14:00:00Z",
              "2026-03-02T15:00:00Z");
      assertThat(ticksOf(api, "down-bounded"))
          .as("the latest three, oldest first")
          .containsExactly("2026-03-02T13:00:00Z", "2026-03-02T14:00:00Z", "2026-03-02T15:00:00Z");
      List<JsonNode> array2 = runs(api, "down-array");
      assertThat(array2).hasSize(1);
      assertThat(array2.get(0).get("input").toString()).as("passed as it is").isEqualTo("[1,2]");

      // Back up: the next tick, on time, starts its run whatever the policy.
      clock.set(Instant.parse("2026-03-02T16:00:20Z"));
      awaitSchedule(api, "down-skip", nextTickAfter(Instant.parse("2026-03-02T16:00:00Z")));
      assertThat(ticksOf(api, "down-skip")).containsExactly("2026-03-02T16:00:00Z");
    }
  }

  @Test
  void aPausedScheduleStartsNothing() {
    SettableClock clock = new SettableClock(Instant.parse("2026-03-02T10:30:00Z"));
    try (TestServer server = TestServer.start(TestDatabase.fresh(), FAST, clock)) {
      Api api = server.api();
      assertThat(
              api.post("/v1/schedules", schedule("resting", "0 * * * *", "catchUp", "all"))
                  .status())
          .isEqualTo(201);
      assertThat(api.post("/v1/schedules/resting/pause", null).status()).isEqualTo(200);
      clock.set(Instant.parse("2026-03-02T13:30:00Z"));
      sleep(200);
      assertThat(runs(api, "resting")).isEmpty();
      assertThat(api.post("/v1/schedules/resting/resume", null).json().get("nextTick").asText())
          .isEqualTo("2026-03-02T14:00:00Z");
      sleep(200);
      assertThat(runs(api, "resting")).as("the ticks of the pause are not caught up").isEmpty();
    }
  }

  /**
   * Europe/Berlin moves from 02:00 to 03:00 on 2026-03-29 and from 03:00 back to 02:00 on
   * 2026-10-25. A daily 02:30 has no tick on the first day (that time does not exist) and one on
   * the second (the first 02:30, still summer time); a daily 01:30 ticks once each day.
   */
  @Test
  void ticksFollowTheZoneAcrossDaylightSavingChanges() {
    SettableClock clock = new SettableClock(Instant.parse("2026-03-27T12:00:00Z"));
    try (TestServer server = TestServer.start(TestDatabase.fresh(), FAST, clock)) {
      Api api = server.api();
      for (String name : List.of("berlin-0230", "berlin-0130")) {
        String cron = name.endsWith("0230") ? "30 2 * * *" : "30 1 * * *";
        assertThat(
                api.post(
                        "/v1/schedules",
                        schedule(name, cron, "zone", "Europe/Berlin", "catchUp", "all"))
                    .status())
            .isEqualTo(201);
      }
      // Spring forward: step through the nights of 28 to 31 March an hour at a time.
      step(clock, api, Instant.parse("2026-03-31T12:00:00Z"));
      assertThat(ticksOf(api, "berlin-0230"))
          .containsExactly(
              "2026-03-28T01:30:00Z", // 02:30 CET
              "2026-03-30T00:30:00Z", // 02:30 CEST; none on the 29th
              "2026-03-31T00:30:00Z");
      assertThat(ticksOf(api, "berlin-0130"))
          .containsExactly(
              "2026-03-28T00:30:00Z", // 01:30 CET
              "2026-03-29T00:30:00Z", // 01:30 CET, before the change at 02:00
              "2026-03-29T23:30:00Z", // 01:30 CEST
              "2026-03-30T23:30:00Z");

      // Fall back: paused over the summer, resumed on 23 October.
      for (String name : List.of("berlin-0230", "berlin-0130")) {
        assertThat(api.post("/v1/schedules/" + name + "/pause", null).status()).isEqualTo(200);
      }
      clock.set(Instant.parse("2026-10-23T12:00:00Z"));
      for (String name : List.of("berlin-0230", "berlin-0130")) {
        assertThat(api.post("/v1/schedules/" + name + "/resume", null).status()).isEqualTo(200);
      }
      step(clock, api, Instant.parse("2026-10-26T12:00:00Z"));
      List<String> autumn0230 =
          ticksOf(api, "berlin-0230").stream().filter(t -> t.startsWith("2026-10")).toList();
      assertThat(autumn0230)
          .containsExactly(
              "2026-10-24T00:30:00Z", // 02:30 CEST
              "2026-10-25T00:30:00Z", // the first 02:30 (CEST); not again at 02:30 CET
              "2026-10-26T01:30:00Z"); // 02:30 CET
      List<String> autumn0130 =
          ticksOf(api, "berlin-0130").stream().filter(t -> t.startsWith("2026-10")).toList();
      assertThat(autumn0130)
          .containsExactly("2026-10-23T23:30:00Z", "2026-10-24T23:30:00Z", "2026-10-26T00:30:00Z");
    }
  }

  /**
   * Moves the clock to {@code until} a quarter of an hour at a time, letting the ticker catch up.
   */
  private static void step(SettableClock clock, Api api, Instant until) {
    while (clock.instant().isBefore(until)) {
      clock.advance(Duration.ofMinutes(15));
      Instant now = clock.instant();
      for (String name : List.of("berlin-0230", "berlin-0130")) {
        awaitSchedule(api, name, nextTickAfter(now));
      }
    }
  }
}
