package dev.pgworkflows.workflows.internal.replay;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import dev.pgworkflows.protocol.StepRecord;
import dev.pgworkflows.workflows.internal.http.Transport;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * The rows of answered updates, between a run's own rows: replay passes each (its state changes
 * joining the body's view) before the body's next step, and as soon as the sleep or wait it
 * followed returns, so the body reads the same state at the same point live and on every replay.
 */
class JournalUpdatesTest {
  private static Task.Entry row(String name, String kind) {
    return new Task.Entry(name, kind, null, null, false);
  }

  private static Task.Entry withState(String name, Map<String, Object> state) {
    JsonNode s = Transport.JSON.valueToTree(state);
    return new Task.Entry(name, "run", null, null, false, s);
  }

  private static Task.Entry update(long id, int x) {
    return withState(Journal.UPDATE + id, Map.of("x", x));
  }

  private record Replaying(Journal journal, RunStateMap state) {
    Integer x() {
      return state.get("x", Integer.class);
    }
  }

  private static Replaying of(Task.Entry... rows) {
    Journal j = new Journal(1, List.of(rows));
    RunStateMap s = new RunStateMap(j);
    j.onReplayedState(s::replayed);
    j.onPassedUpdate(s::updatePassed);
    return new Replaying(j, s);
  }

  @Test
  void anUpdateAnsweredDuringASleepIsSeenAsTheSleepReturns() {
    Replaying r = of(row("a", "run"), row("nap", "sleep"), update(7, 5), row("b", "run"));
    r.journal().replayed("a", "run");
    assertThat(r.x()).isNull();
    r.journal().replayed("nap", "sleep");
    assertThat(r.x()).isEqualTo(5);
    assertThat(r.journal().replayed("b", "run")).isNotNull();
    assertThat(r.journal().replaying()).isFalse();
  }

  @Test
  void anUpdateAnsweredDuringAWaitIsSeenWhenTheWaitReturns() {
    Replaying r = of(row("a", "run"), update(7, 5), row("w", "wait"));
    r.journal().replayed("a", "run");
    assertThat(r.x()).as("read by the body before its wait").isNull();
    assertThat(r.journal().replayed("w", "wait")).isNotNull();
    assertThat(r.x()).isEqualTo(5);
  }

  @Test
  void theBodysChangesCarriedBeforeAnUpdateAreNotMadeAgainOverIt() {
    Replaying r =
        of(row("a", "run"), withState(RunStateMap.CARRIER + 1, Map.of("x", 1)), update(7, 5));
    r.journal().replayed("a", "run");
    assertThat(r.journal().replaying()).as("only an update's row is ahead").isFalse();
    r.state().put("x", 1);
    assertThat(r.journal().replayed("w", "wait")).as("the wait the run is in").isNull();
    assertThat(r.x()).isEqualTo(5);
    assertThat(r.state().carrier(Instant.now()))
        .as("the body's change is journaled already, before the update")
        .isNull();
  }

  @Test
  void theBodysNewChangesStayOnTopOfAnUpdateAndGoWithItsNextRow() {
    Replaying r = of(row("a", "run"), update(7, 5));
    r.journal().replayed("a", "run");
    r.state().put("x", 1);
    assertThat(r.journal().replayed("b", "run")).as("a step retried after the update").isNull();
    assertThat(r.x()).as("the body's change, journaled after the update").isEqualTo(1);
    StepRecord b = r.state().attach(new StepRecord("b", "run", null, null, Instant.now()), null);
    assertThat(b.state().get("x").asInt()).isEqualTo(1);
  }
}
