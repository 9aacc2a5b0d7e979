package dev.pgworkflows.server.internal.http;

import dev.pgworkflows.engine.internal.checks.ApiException;
import dev.pgworkflows.engine.internal.runtime.SlotReport;
import dev.pgworkflows.protocol.Headers;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * The slot reports workers send with their writes, in the {@value #HEADER} header: stream id,
 * report number, tasks seen, slots free.
 */
final class SlotReports {
  /** The header a worker's writes carry its slot report in. */
  static final String HEADER = Headers.TASK_STREAM_SLOTS;

  private static final Pattern REPORT =
      Pattern.compile("(\\S{1,64}) ([0-9]{1,18}) ([0-9]{1,18}) ([0-9]{1,4})");

  private SlotReports() {}

  /**
   * Parses a slot report; null when there is none. A malformed one is a 400, before anything else
   * of the request is done.
   */
  static SlotReport parse(String header) {
    if (header == null) {
      return null;
    }
    Matcher m = REPORT.matcher(header);
    if (m.matches()) {
      long number = Long.parseLong(m.group(2));
      long free = Long.parseLong(m.group(4));
      if (number >= 1 && free <= 1000) {
        return new SlotReport(m.group(1), number, Long.parseLong(m.group(3)), free);
      }
    }
    throw ApiException.badRequest(
        HEADER,
        HEADER
            + " must be \"<stream> <report> <seen> <free>\": a stream id, a report number of 1 or"
            + " more, the tasks seen and the free slots (0 to 1000)");
  }
}
