package dev.pgworkflows.engine.internal.runtime;

import dev.pgworkflows.engine.internal.store.TaskStore;
import dev.pgworkflows.protocol.Labels;
import dev.pgworkflows.protocol.Task;
import java.util.List;
import java.util.Map;
import java.util.TreeSet;

/**
 * What a waiting poll takes: runs of these versions, up to {@code max}, leased for so long; a
 * journal of more than {@code journalMax} rows is withheld (null: never), for a worker that keeps
 * its runs' journals and asks for the rows it lacks. {@code worker} (null: unnamed) and {@code
 * labels} say who polls, for the workflows whose tasks go to chosen workers.
 */
public record PollTerms(
    List<Integer> versions,
    int max,
    int leaseSeconds,
    Integer journalMax,
    String worker,
    Map<String, String> labels,
    boolean ownKind) {

  public PollTerms {
    versions = List.copyOf(versions);
    labels = labels == null ? Map.of() : Map.copyOf(labels);
  }

  /** Terms of an unnamed worker. */
  public PollTerms(List<Integer> versions, int max, int leaseSeconds, Integer journalMax) {
    this(versions, max, leaseSeconds, journalMax, null, Map.of(), false);
  }

  /** Terms that always carry the whole journal. */
  public PollTerms(List<Integer> versions, int max, int leaseSeconds) {
    this(versions, max, leaseSeconds, null);
  }

  /** These terms with {@code journalMax}. */
  public PollTerms withJournalMax(Integer journalMax) {
    return new PollTerms(versions, max, leaseSeconds, journalMax, worker, labels, ownKind);
  }

  /**
   * These terms for the worker {@code who} (null: unnamed), whose polls are a kind of their own
   * when {@code sticky} (its workflow's runs stick to their worker).
   */
  public PollTerms of(WorkerIdentity who, boolean sticky) {
    return who == null
        ? this
        : new PollTerms(versions, max, leaseSeconds, journalMax, who.id(), who.labels(), sticky);
  }

  /** These terms taking up to {@code max}. */
  public PollTerms withMax(int max) {
    return new PollTerms(versions, max, leaseSeconds, journalMax, worker, labels, ownKind);
  }

  /** Leases the tasks these terms take of workflow {@code name}. */
  public List<Task> receive(TaskStore store, String name) {
    return store.poll(name, versions, max, leaseSeconds, journalMax, worker, labels);
  }

  /**
   * What a waiting poll can take, for passing on a wake-up it could not use: polls that list the
   * same versions in another order take the same runs and are one kind, unless their labels differ
   * (which may give them other runs), or they are of a workflow whose runs stick to their worker
   * ({@code ownKind}: each worker's polls are then a kind of their own).
   */
  public String waitKey() {
    return new TreeSet<>(versions)
        + (ownKind && worker != null ? " " + worker : "")
        + (labels.isEmpty() ? "" : " " + Labels.format(labels));
  }
}
