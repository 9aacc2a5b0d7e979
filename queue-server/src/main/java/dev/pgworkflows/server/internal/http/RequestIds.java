package dev.pgworkflows.server.internal.http;

import io.javalin.http.Context;
import java.util.concurrent.ThreadLocalRandom;
import java.util.regex.Pattern;
import org.slf4j.MDC;

/** Gives every request an id, echoed in {@code X-Request-Id} and put on its log lines. */
public final class RequestIds {
  public static final String ATTRIBUTE = "requestId";
  public static final String HEADER = "X-Request-Id";
  private static final Pattern ACCEPTABLE = Pattern.compile("[A-Za-z0-9._-]{1,64}");

  private RequestIds() {}

  public static void assign(Context ctx) {
    String given = ctx.header(HEADER);
    String id =
        given != null && ACCEPTABLE.matcher(given).matches()
            ? given
            : Long.toHexString(ThreadLocalRandom.current().nextLong() & Long.MAX_VALUE);
    ctx.attribute(ATTRIBUTE, id);
    ctx.header(HEADER, id);
    MDC.put(ATTRIBUTE, id);
  }

  public static void clear() {
    MDC.remove(ATTRIBUTE);
  }
}
