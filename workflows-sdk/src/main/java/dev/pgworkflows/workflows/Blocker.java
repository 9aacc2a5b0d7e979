package dev.pgworkflows.workflows;

import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * One reason a run is not running now (see {@link Runs#blockers}): its {@code kind} ({@code
 * sleeping}, {@code waiting}, {@code leased}, {@code no_worker}, {@code behind_group}, {@code
 * concurrency}, {@code rate_limited}, {@code paused}, {@code workflow_paused} or {@code ended}),
 * the reason in plain words, and the kind's data as the server sent it (for {@code waiting}: {@code
 * event}, {@code match}, {@code since}, {@code until}, {@code unmatched}; for {@code no_worker}:
 * {@code version}, {@code servedVersions}; ...). Instants in {@code data} are ISO-8601 strings.
 */
public record Blocker(String kind, String text, Map<String, Object> data) {
  public Blocker {
    data = data == null ? Map.of() : Collections.unmodifiableMap(new LinkedHashMap<>(data));
  }
}
