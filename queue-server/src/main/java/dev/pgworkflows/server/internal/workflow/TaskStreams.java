package dev.pgworkflows.server.internal.workflow;

import dev.pgworkflows.server.internal.http.ApiException;
import dev.pgworkflows.server.internal.wait.LongPoll;
import dev.pgworkflows.server.internal.wait.Timers;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * The task streams open on this server, and the slot reports workers send with their writes (the
 * {@value #HEADER} header: stream id, report number, tasks seen, slots free).
 */
final class TaskStreams {
  /** The header a worker's writes carry its slot report in. */
  static final String HEADER = "Task-Stream-Slots";

  /** Each open stream holds a request thread while it writes; this many at most. */
  static final int MAX_OPEN = 100;

  private static final Pattern REPORT =
      Pattern.compile("(\\S{1,64}) ([0-9]{1,18}) ([0-9]{1,18}) ([0-9]{1,4})");

  /** A parsed slot report, to apply once the request that carried it has done its work. */
  record Report(String stream, long number, long seen, long free) {}

  private final ConcurrentHashMap<String, TaskStream> open = new ConcurrentHashMap<>();
  private final WorkflowStore store;
  private final LongPoll longPoll;
  private final Timers timers;

  TaskStreams(WorkflowStore store, LongPoll longPoll, Timers timers) {
    this.store = store;
    this.longPoll = longPoll;
    this.timers = timers;
  }

  /** Opens a stream; a 503 when this server already has {@value #MAX_OPEN} open. */
  TaskStream open(String name, List<Integer> versions, int slots, int leaseSeconds, int seconds) {
    if (open.size() >= MAX_OPEN) {
      throw new ApiException(
          503, "this server has " + MAX_OPEN + " task streams open; poll, or try again later");
    }
    TaskStream s =
        new TaskStream(
            UUID.randomUUID().toString(),
            name,
            versions,
            slots,
            leaseSeconds,
            seconds,
            store,
            longPoll,
            timers);
    open.put(s.id, s);
    return s;
  }

  /** Forgets a stream that has ended. */
  void closed(TaskStream s) {
    open.remove(s.id);
  }

  /** Ends a stream of workflow {@code name}; false when no such stream is open here. */
  boolean end(String name, String id) {
    TaskStream s = open.get(id);
    if (s == null || !s.name().equals(name)) {
      return false;
    }
    s.end();
    open.remove(id, s); // its room is free as soon as it is ending
    return true;
  }

  /** Ends every stream, as the server stops. */
  void endAll() {
    open.values().forEach(TaskStream::end);
  }

  /**
   * Parses a slot report; null when there is none. A malformed one is a 400, before anything else
   * of the request is done.
   */
  static Report parse(String header) {
    if (header == null) {
      return null;
    }
    Matcher m = REPORT.matcher(header);
    if (m.matches()) {
      long number = Long.parseLong(m.group(2));
      long free = Long.parseLong(m.group(4));
      if (number >= 1 && free <= 1000) {
        return new Report(m.group(1), number, Long.parseLong(m.group(3)), free);
      }
    }
    throw ApiException.badRequest(
        HEADER,
        HEADER
            + " must be \"<stream> <report> <seen> <free>\": a stream id, a report number of 1 or"
            + " more, the tasks seen and the free slots (0 to 1000)");
  }

  /**
   * Applies a report to its stream, when that is open here for workflow {@code name}, with {@code
   * unfilled} more slots free (those that asked a batch for tasks and got none); a report for a
   * stream that ended, or that another server holds, is dropped. Returns whether the stream is open
   * here.
   */
  boolean apply(String name, Report r, int unfilled) {
    if (r == null) {
      return false;
    }
    TaskStream s = open.get(r.stream());
    if (s == null || !s.name().equals(name)) {
      return false;
    }
    s.report(r.number(), r.seen(), r.free() + unfilled);
    return true;
  }
}
