package dev.pgworkflows.protocol;

import java.util.Set;
import java.util.regex.Pattern;

/**
 * The naming rules both ends check before any I/O (the SQL functions check them again): workflow
 * and queue names, and the queue that holds a workflow's runs.
 */
public final class Names {
  /** Prefix of the queue that holds a workflow's runs: {@code __wf_<name>}. */
  public static final String WORKFLOW_QUEUE_PREFIX = "__wf_";

  private static final Pattern WORKFLOW = Pattern.compile("[a-z0-9_][a-z0-9_-]{0,42}");
  private static final Pattern QUEUE = Pattern.compile("[a-z0-9_][a-z0-9_-]{0,47}");
  private static final Pattern STEP = Pattern.compile("[a-zA-Z0-9._-]{1,128}");
  private static final Pattern EVENT = Pattern.compile("[A-Za-z0-9._:-]{1,128}");
  // Not dots alone: "." and ".." are path segments that URLs resolve away.
  private static final Pattern STREAM = Pattern.compile("(?!\\.+$)[a-zA-Z0-9._-]{1,128}");

  private Names() {}

  /** 1 to 43 characters of a-z, 0-9, "_" and "-", not starting with "-". */
  public static boolean isWorkflowName(String name) {
    return name != null && WORKFLOW.matcher(name).matches();
  }

  /** 1 to 48 characters of a-z, 0-9, "_" and "-", not starting with "-". */
  public static boolean isQueueName(String name) {
    return name != null && QUEUE.matcher(name).matches();
  }

  /**
   * 1 to 128 characters of a-z, A-Z, 0-9, ".", "_" and "-", not dots alone: a run's stream (as a
   * step name, which may be dots alone).
   */
  public static boolean isStreamName(String name) {
    return name != null && STREAM.matcher(name).matches();
  }

  /** 1 to 128 characters of a-z, A-Z, 0-9, ".", "_" and "-": a step's name, which writes. */
  public static boolean isStepName(String name) {
    return name != null && STEP.matcher(name).matches();
  }

  /**
   * 1 to 128 characters of a-z, A-Z, 0-9, ".", "_", ":" and "-": an event a caller signals a run
   * with (the engine's own events start with "__").
   */
  public static boolean isEventName(String name) {
    return name != null && EVENT.matcher(name).matches();
  }

  /** The kinds of a journaled step: run, sleep, wait and child. */
  public static final Set<String> STEP_KINDS = Set.of("run", "sleep", "wait", "child");

  /** Whether {@code kind} is the kind of a journaled step ({@link #STEP_KINDS}). */
  public static boolean isStepKind(String kind) {
    return kind != null && STEP_KINDS.contains(kind);
  }

  /** The queue of a workflow's runs. */
  public static String workflowQueue(String workflowName) {
    return WORKFLOW_QUEUE_PREFIX + workflowName;
  }

  /** Whether a queue belongs to a workflow. */
  public static boolean isWorkflowQueue(String queueName) {
    return queueName != null && queueName.startsWith(WORKFLOW_QUEUE_PREFIX);
  }
}
