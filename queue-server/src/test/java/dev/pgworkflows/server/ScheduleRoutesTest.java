package dev.pgworkflows.server;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import dev.pgworkflows.server.testing.ServerOnFreshDatabase;
import dev.pgworkflows.server.testing.SettableClock;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * {@code /v1/schedules} over HTTP: made, listed, read, changed, paused, resumed and deleted, each
 * exchange checked against openapi.yaml; bad input is a 400 naming the field and stores nothing;
 * the changes are on the audit trail.
 */
class ScheduleRoutesTest {
  /** Monday 2026-03-02, 10:30 UTC. */
  private static final SettableClock clock =
      new SettableClock(Instant.parse("2026-03-02T10:30:00Z"));

  @RegisterExtension
  static final ServerOnFreshDatabase server =
      ServerOnFreshDatabase.with("WORKFLOWS_SCHEDULE_INTERVAL_MS", "60000").withClock(clock);

  private static final Api api = server.api();

  private static Map<String, Object> schedule(String name, String workflow, String cron) {
    Map<String, Object> body = new HashMap<>();
    body.put("name", name);
    body.put("workflow", workflow);
    body.put("cron", cron);
    return body;
  }

  private static List<String> names() {
    List<String> out = new ArrayList<>();
    api.get("/v1/schedules").json().get("schedules").forEach(s -> out.add(s.get("name").asText()));
    return out;
  }

  @Test
  void aScheduleIsMadeListedReadChangedPausedResumedAndDeleted() {
    Map<String, Object> body = schedule("weekday-report", "report", "0 9 * * MON-FRI");
    body.put("zone", "Europe/Berlin");
    body.put("input", Map.of("format", "pdf"));
    Api.Response made = api.post("/v1/schedules", body);
    assertThat(made.status()).as(made.body()).isEqualTo(201);
    JsonNode s = made.json();
    assertThat(s.get("workflow").asText()).isEqualTo("report");
    assertThat(s.get("cron").asText()).isEqualTo("0 9 * * MON-FRI");
    assertThat(s.get("zone").asText()).isEqualTo("Europe/Berlin");
    assertThat(s.get("input").get("format").asText()).isEqualTo("pdf");
    assertThat(s.get("catchUp").asText()).isEqualTo("skip");
    assertThat(s.get("maxCatchUp").asInt()).isEqualTo(100);
    assertThat(s.get("paused").asBoolean()).isFalse();
    assertThat(s.get("source").asText()).isEqualTo("api");
    // 09:00 in Berlin (UTC+1 in March before the change) of the next weekday: Tuesday.
    assertThat(s.get("nextTick").asText()).isEqualTo("2026-03-03T08:00:00Z");
    assertThat(s.has("lastTick")).isFalse();

    Api.Response again =
        api.post("/v1/schedules", schedule("weekday-report", "other", "* * * * *"));
    assertThat(again.status()).isEqualTo(409);
    assertThat(again.isProblem()).isTrue();
    assertThat(again.json().get("detail").asText()).contains("weekday-report");
    assertThat(api.get("/v1/schedules/weekday-report").json().get("workflow").asText())
        .isEqualTo("report");

    assertThat(names()).contains("weekday-report");
    assertThat(api.get("/v1/schedules/weekday-report").json()).isEqualTo(s);

    Api.Response changed =
        api.put(
            "/v1/schedules/weekday-report",
            Map.of("cron", "30 7 * * *", "zone", "UTC", "catchUp", "latest", "maxCatchUp", 5));
    assertThat(changed.status()).as(changed.body()).isEqualTo(200);
    assertThat(changed.json().get("workflow").asText()).as("kept").isEqualTo("report");
    assertThat(changed.json().get("cron").asText()).isEqualTo("30 7 * * *");
    assertThat(changed.json().get("catchUp").asText()).isEqualTo("latest");
    assertThat(changed.json().get("maxCatchUp").asInt()).isEqualTo(5);
    assertThat(changed.json().has("input")).as("replaced: none given").isFalse();
    assertThat(changed.json().get("nextTick").asText()).isEqualTo("2026-03-03T07:30:00Z");

    Api.Response paused = api.post("/v1/schedules/weekday-report/pause", null);
    assertThat(paused.status()).isEqualTo(200);
    assertThat(paused.json().get("paused").asBoolean()).isTrue();

    clock.set(Instant.parse("2026-03-05T12:00:00Z"));
    Api.Response resumed = api.post("/v1/schedules/weekday-report/resume", null);
    assertThat(resumed.status()).isEqualTo(200);
    assertThat(resumed.json().get("paused").asBoolean()).isFalse();
    assertThat(resumed.json().get("nextTick").asText())
        .as("from the first tick after now: what fell while paused is not caught up")
        .isEqualTo("2026-03-06T07:30:00Z");

    assertThat(api.delete("/v1/schedules/weekday-report").status()).isEqualTo(204);
    assertThat(api.get("/v1/schedules/weekday-report").status()).isEqualTo(404);
    assertThat(api.delete("/v1/schedules/weekday-report").status()).isEqualTo(404);
    assertThat(api.post("/v1/schedules/weekday-report/pause", null).status()).isEqualTo(404);
    assertThat(api.put("/v1/schedules/weekday-report", Map.of("cron", "* * * * *")).status())
        .isEqualTo(404);
    assertThat(names()).doesNotContain("weekday-report");
  }

  @Test
  void badFieldsAreRefusedNamingTheFieldAndNothingIsStored() {
    record Bad(Map<String, Object> body, String field, String says) {}
    Map<String, Object> badZone = schedule("bad-zone", "wf", "0 9 * * *");
    badZone.put("zone", "Mars/Olympus");
    Map<String, Object> badCatchUp = schedule("bad-catch-up", "wf", "0 9 * * *");
    badCatchUp.put("catchUp", "sometimes");
    Map<String, Object> badMax = schedule("bad-max", "wf", "0 9 * * *");
    badMax.put("maxCatchUp", 0);
    Map<String, Object> badOverlap = schedule("bad-overlap", "wf", "0 9 * * *");
    badOverlap.put("overlap", "newest");
    Map<String, Object> badFailures = schedule("bad-failures", "wf", "0 9 * * *");
    badFailures.put("pauseAfterFailures", 0);
    List<Bad> bad =
        List.of(
            new Bad(schedule("bad-cron", "wf", "0 9 * *"), "cron", "contains 4 parts"),
            new Bad(schedule("bad-cron", "wf", "61 * * * *"), "cron", "61 not in range"),
            new Bad(schedule("bad-cron", "wf", "0 0 30 2 *"), "cron", "never ticks"),
            new Bad(schedule("bad-cron", "wf", " "), "cron", "cron is required"),
            new Bad(badZone, "zone", "Mars/Olympus"),
            new Bad(schedule("Bad Name", "wf", "0 9 * * *"), "name", "1 to 64 characters"),
            new Bad(schedule("x".repeat(65), "wf", "0 9 * * *"), "name", "1 to 64"),
            new Bad(schedule("bad-wf", "-wf", "0 9 * * *"), "workflow", "workflow name"),
            new Bad(schedule("bad-wf", null, "0 9 * * *"), "workflow", "required"),
            new Bad(badCatchUp, "catchUp", "skip"),
            new Bad(badMax, "maxCatchUp", "between 1 and 1000"),
            new Bad(badOverlap, "overlap", "buffer_all"),
            new Bad(badFailures, "pauseAfterFailures", "between 1 and 1000"));
    for (Bad b : bad) {
      Api.Response r = api.post("/v1/schedules", b.body());
      assertThat(r.status()).as(b.toString()).isEqualTo(400);
      assertThat(r.json().get("field").asText()).as(b.toString()).isEqualTo(b.field());
      assertThat(r.json().get("detail").asText()).as(b.toString()).contains(b.says());
    }
    assertThat(names()).noneMatch(n -> n.startsWith("bad"));

    assertThat(api.post("/v1/schedules", schedule("kept", "wf", "0 9 * * *")).status())
        .isEqualTo(201);
    Api.Response r = api.put("/v1/schedules/kept", Map.of("cron", "0 9 * * *", "zone", "Nowhere"));
    assertThat(r.status()).isEqualTo(400);
    assertThat(r.json().get("field").asText()).isEqualTo("zone");
    r = api.put("/v1/schedules/kept", Map.of("cron", "0 25 * * *"));
    assertThat(r.status()).isEqualTo(400);
    assertThat(r.json().get("field").asText()).isEqualTo("cron");
    r = api.put("/v1/schedules/kept", Map.of("name", "renamed", "cron", "0 9 * * *"));
    assertThat(r.json().get("field").asText()).isEqualTo("name");
    JsonNode kept = api.get("/v1/schedules/kept").json();
    assertThat(kept.get("cron").asText()).isEqualTo("0 9 * * *");
    assertThat(kept.get("zone").asText()).isEqualTo("UTC");
    assertThat(api.get("/v1/schedules/Not%20A%20Name").json().get("field").asText())
        .isEqualTo("name");
    Api.Response tenYears =
        api.post(
            "/v1/schedules/kept/backfill",
            Map.of("from", "2016-01-01T00:00:00Z", "to", "2026-01-01T00:00:00Z"));
    assertThat(tenYears.status()).isEqualTo(400);
    assertThat(tenYears.json().get("field").asText()).isEqualTo("to");
    assertThat(tenYears.json().get("detail").asText()).contains("more than 1000 ticks");
    Api.Response backwards =
        api.post(
            "/v1/schedules/kept/backfill",
            Map.of("from", "2026-01-02T00:00:00Z", "to", "2026-01-01T00:00:00Z"));
    assertThat(backwards.json().get("field").asText()).isEqualTo("to");
    assertThat(
            api.post("/v1/schedules/kept/backfill", Map.of("to", "2026-01-01T00:00:00Z"))
                .json()
                .get("field")
                .asText())
        .isEqualTo("from");
    assertThat(api.get("/v1/workflows/wf/runs").json().get("runs")).isEmpty();
    assertThat(api.delete("/v1/schedules/kept").status()).isEqualTo(204);
  }

  @Test
  void aWorkerRegistersItsWorkflowsSchedulesAndChangesThemWhenTheyChange() {
    Map<String, Object> nightly = new HashMap<>(Map.of("cron", "0 2 * * *", "catchUp", "all"));
    Api.Response first =
        api.post(
            "/v1/workflows/nightly/schedules",
            Map.of(
                "schedules", List.of(nightly, Map.of("name", "nightly-eu", "cron", "0 3 * * *"))));
    assertThat(first.status()).as(first.body()).isEqualTo(200);
    JsonNode made = first.json().get("schedules");
    assertThat(made.get(0).get("name").asText()).as("the workflow's name").isEqualTo("nightly");
    assertThat(made.get(0).get("source").asText()).isEqualTo("code");
    assertThat(made.get(0).get("catchUp").asText()).isEqualTo("all");
    assertThat(made.get(1).get("name").asText()).isEqualTo("nightly-eu");
    assertThat(made.get(1).get("workflow").asText()).isEqualTo("nightly");

    assertThat(api.post("/v1/schedules/nightly/pause", null).status()).isEqualTo(200);
    nightly.put("cron", "15 2 * * *");
    JsonNode changed =
        api.post("/v1/workflows/nightly/schedules", Map.of("schedules", List.of(nightly)))
            .json()
            .get("schedules")
            .get(0);
    assertThat(changed.get("cron").asText()).isEqualTo("15 2 * * *");
    assertThat(changed.get("paused").asBoolean()).as("as the operator left it").isTrue();

    // A name made through the API, or another workflow's, is not the worker's to change.
    assertThat(api.post("/v1/schedules", schedule("by-hand", "nightly", "0 4 * * *")).status())
        .isEqualTo(201);
    Api.Response refused =
        api.post(
            "/v1/workflows/nightly/schedules",
            Map.of(
                "schedules",
                List.of(
                    Map.of("name", "fresh", "cron", "0 5 * * *"),
                    Map.of("name", "by-hand", "cron", "0 6 * * *"))));
    assertThat(refused.status()).isEqualTo(409);
    assertThat(refused.json().get("detail").asText()).contains("by-hand", "API");
    assertThat(names()).as("nothing registered").doesNotContain("fresh");
    assertThat(api.get("/v1/schedules/by-hand").json().get("cron").asText()).isEqualTo("0 4 * * *");
    assertThat(
            api.post(
                    "/v1/workflows/other/schedules",
                    Map.of("schedules", List.of(Map.of("name", "nightly-eu", "cron", "0 3 * * *"))))
                .status())
        .isEqualTo(409);

    Api.Response badItem =
        api.post(
            "/v1/workflows/nightly/schedules",
            Map.of(
                "schedules",
                List.of(
                    Map.of("name", "ok", "cron", "0 3 * * *"),
                    Map.of("name", "bad", "cron", "nope"))));
    assertThat(badItem.status()).isEqualTo(400);
    assertThat(badItem.json().get("field").asText()).isEqualTo("schedules[1].cron");
    Api.Response twice =
        api.post(
            "/v1/workflows/nightly/schedules",
            Map.of("schedules", List.of(Map.of("cron", "0 3 * * *"), Map.of("cron", "0 4 * * *"))));
    assertThat(twice.status()).isEqualTo(400);
    assertThat(twice.json().get("field").asText()).isEqualTo("schedules[1].name");
    assertThat(names()).doesNotContain("ok", "bad");
    for (String n : List.of("nightly", "nightly-eu", "by-hand")) {
      assertThat(api.delete("/v1/schedules/" + n).status()).isEqualTo(204);
    }
  }

  @Test
  void theChangesAreOnTheAuditTrail() {
    assertThat(api.post("/v1/schedules", schedule("audited", "wf", "0 9 * * *")).status())
        .isEqualTo(201);
    api.put("/v1/schedules/audited", Map.of("cron", "0 10 * * *"));
    api.post("/v1/schedules/audited/pause", null);
    api.post("/v1/schedules/audited/resume", null);
    api.post(
        "/v1/schedules/audited/backfill",
        Map.of("from", "2026-11-01T00:00:00Z", "to", "2026-11-02T00:00:00Z"));
    api.delete("/v1/schedules/audited");
    List<String> actions = new ArrayList<>();
    api.get("/v1/audit")
        .json()
        .get("entries")
        .forEach(
            e -> {
              if (e.get("action").asText().startsWith("schedule.")
                  && e.get("details").path("name").asText().equals("audited")) {
                actions.add(e.get("action").asText());
              }
            });
    assertThat(actions)
        .containsExactly(
            "schedule.delete",
            "schedule.backfill",
            "schedule.resume",
            "schedule.pause",
            "schedule.update",
            "schedule.create");
  }
}
