package dev.pgworkflows.server.testing;

import ch.qos.logback.classic.Logger;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.core.read.ListAppender;
import java.util.List;
import org.slf4j.LoggerFactory;
import org.slf4j.event.KeyValuePair;

/**
 * What one logger writes while it is open, kept in memory for a test to read.
 *
 * <pre>{@code
 * try (LogCapture audit = LogCapture.of("pgworkflows.audit")) { ... audit.messages() ... }
 * }</pre>
 */
public final class LogCapture implements AutoCloseable {
  private final Logger logger;
  private final ListAppender<ILoggingEvent> appender = new ListAppender<>();

  private LogCapture(Logger logger) {
    this.logger = logger;
    appender.start();
    logger.addAppender(appender);
  }

  public static LogCapture of(String loggerName) {
    return new LogCapture((Logger) LoggerFactory.getLogger(loggerName));
  }

  public static LogCapture of(Class<?> loggerOf) {
    return of(loggerOf.getName());
  }

  /** The events so far, oldest first. */
  public List<ILoggingEvent> events() {
    synchronized (appender) { // AppenderBase appends while holding its own lock
      return List.copyOf(appender.list);
    }
  }

  /** The formatted messages so far, each prefixed with its level: {@code "WARN listening..."}. */
  public List<String> messages() {
    return events().stream().map(e -> e.getLevel() + " " + e.getFormattedMessage()).toList();
  }

  /** The value of an event's key-value pair, null when it has none. */
  public static Object value(ILoggingEvent e, String key) {
    List<KeyValuePair> pairs = e.getKeyValuePairs();
    if (pairs == null) {
      return null;
    }
    return pairs.stream().filter(p -> p.key.equals(key)).map(p -> p.value).findFirst().orElse(null);
  }

  @Override
  public void close() {
    logger.detachAppender(appender);
    appender.stop();
  }
}
