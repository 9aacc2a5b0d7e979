package dev.pgworkflows.workflows.internal.replay;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.BooleanNode;
import com.fasterxml.jackson.databind.node.LongNode;
import com.fasterxml.jackson.databind.node.TextNode;
import dev.pgworkflows.protocol.StepRecord;
import io.opentelemetry.api.trace.Span;
import java.time.Instant;
import java.time.InstantSource;
import java.util.HashMap;
import java.util.Map;
import java.util.Random;
import java.util.UUID;
import java.util.concurrent.ThreadLocalRandom;
import java.util.function.Consumer;
import java.util.function.Supplier;
import java.util.regex.Pattern;

/**
 * The body's deterministic values: the time, UUIDs, a random generator's seed and patch markers,
 * each journaled the first time as a run row of its own ({@code __now.<n>}, {@code __uuid.<n>},
 * {@code __seed}, {@code __patch.<id>}, and the sets of search attributes, {@code
 * __attributes.<n>}) and read back from the journal on replay. A new row is held like a run step's
 * completion and sent with the run's next write.
 */
final class JournaledValues {
  private static final Pattern PATCH_ID = Pattern.compile("[a-zA-Z0-9._-]{1,100}");

  private final Journal journal;
  private final RunCompletion completion;
  private final StepExecution steps;
  private final InstantSource clock;
  private final Map<String, Boolean> patches = new HashMap<>();
  private int nows;
  private int uuids;
  private int attributeSets;
  private Random random;

  JournaledValues(
      Journal journal, RunCompletion completion, StepExecution steps, InstantSource clock) {
    this.journal = journal;
    this.completion = completion;
    this.steps = steps;
    this.clock = clock;
  }

  Instant now() {
    return Instant.parse(
        value(
                Journal.RESERVED + "now." + (++nows),
                () -> TextNode.valueOf(clock.instant().toString()))
            .asText());
  }

  UUID randomUUID() {
    return UUID.fromString(
        value(
                Journal.RESERVED + "uuid." + (++uuids),
                () -> TextNode.valueOf(UUID.randomUUID().toString()))
            .asText());
  }

  Random random() {
    if (random == null) {
      long seed =
          value(
                  Journal.RESERVED + "seed",
                  () -> LongNode.valueOf(ThreadLocalRandom.current().nextLong()))
              .asLong();
      random = new Random(seed);
    }
    return random;
  }

  boolean patched(String id) {
    if (id == null || !PATCH_ID.matcher(id).matches()) {
      throw new IllegalArgumentException(
          "patch id \""
              + id
              + "\" must be 1 to 100 characters of a-z, A-Z, 0-9, \".\", \"_\", \"-\"");
    }
    Boolean known = patches.get(id);
    if (known != null) {
      return known;
    }
    String name = Journal.RESERVED + "patch." + id;
    steps.checkOutsideStep(name);
    boolean patched;
    Task.Entry e = journal.nextIfNamed(name);
    if (e != null) {
      patched = e.output() != null && e.output().asBoolean();
    } else if (journal.replaying()) {
      // The run passed this point before the patch existed: it keeps to the old code.
      patched = false;
    } else {
      journalNew(name, BooleanNode.TRUE);
      patched = true;
    }
    patches.put(id, patched);
    return patched;
  }

  /**
   * The body's next set of search attributes, {@code __attributes.<n>}: made by {@code set} the
   * first time and journaled, passed on a replay. A worker that dies between the two leaves a
   * replay to make it again, with the same values.
   */
  void attributes(JsonNode values, Consumer<JsonNode> set) {
    String name = Journal.RESERVED + "attributes." + (++attributeSets);
    steps.checkOutsideStep(name);
    if (journal.replayedOwn(name) != null) {
      return;
    }
    set.accept(values);
    journalNew(name, values);
  }

  private JsonNode value(String name, Supplier<JsonNode> fresh) {
    steps.checkOutsideStep(name);
    Task.Entry e = journal.replayedOwn(name);
    if (e != null) {
      return e.output();
    }
    JsonNode v = fresh.get();
    journalNew(name, v);
    return v;
  }

  private void journalNew(String name, JsonNode output) {
    steps.beforeNewStep();
    completion.hold(
        name,
        steps.state().attach(new StepRecord(name, "run", output, null, clock.instant()), null),
        0.0,
        Span.getInvalid());
    journal.append(new Task.Entry(name, "run", output, null, false));
  }
}
