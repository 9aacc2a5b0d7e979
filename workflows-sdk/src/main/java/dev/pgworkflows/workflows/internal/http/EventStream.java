package dev.pgworkflows.workflows.internal.http;

import com.fasterxml.jackson.databind.JsonNode;
import dev.pgworkflows.workflows.WorkflowException;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.lang.reflect.Type;
import java.net.HttpURLConnection;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.util.Iterator;
import java.util.NoSuchElementException;

/**
 * Follows a run's stream over the server's Server-Sent Events route: each event an entry, until the
 * {@code end} event. A connection that drops (or sends nothing, not even its keep-alive comments,
 * for {@link #SILENCE}) is opened again after the last entry read ({@code Last-Event-ID}), with a
 * growing pause, for up to {@link #GIVE_UP} without progress; an error answer (4xx) is thrown. An
 * answer the server ends without an end event (it bounds how long one lasts, or it stopped) is
 * resumed too, after a pause of at least {@link #RESUME_PAUSE_MS} that grows while answers keep
 * ending with no entry, up to {@link #MAX_RESUME_PAUSE_MS}.
 *
 * <p>One thread iterates; {@link #close} may come from another and never waits for it: it
 * disconnects the connection on a thread of its own (the JDK's disconnect waits for a read in
 * progress to return), and the iteration ends with the next line the server sends, a keep-alive
 * comment at the latest (every 15 s).
 */
public final class EventStream<E> implements Iterator<E>, AutoCloseable {
  /** How long a connection may stay silent: the server comments every 15 s. */
  static final Duration SILENCE = Duration.ofSeconds(45);

  /** How long to keep trying to reach the server. */
  static final Duration GIVE_UP = Duration.ofMinutes(1);

  /** The pause before resuming an answer that ended without an end event. */
  static final long RESUME_PAUSE_MS = 100;

  /** The longest pause before resuming an answer that ended without an end event. */
  static final long MAX_RESUME_PAUSE_MS = 1_000;

  /** Makes the caller's element of an entry. */
  @FunctionalInterface
  public interface Maker<E> {
    E make(long offset, Object value, Instant writtenAt);
  }

  private final Transport transport;
  private final String path;
  private final Maker<E> maker;
  private final com.fasterxml.jackson.databind.JavaType type;
  private long next;
  // Read and replaced by the iterating thread only; close() touches only the connection.
  private BufferedReader in;
  private volatile HttpURLConnection connection;
  private E ready;
  private volatile boolean done;

  public EventStream(Transport transport, String path, long from, Maker<E> maker, Type type) {
    this.transport = transport;
    this.path = path;
    this.next = from;
    this.maker = maker;
    this.type = Transport.JSON.constructType(type);
  }

  @Override
  public boolean hasNext() {
    if (ready != null) {
      return true;
    }
    long failingSince = 0;
    long pauseMs = 100;
    long resumePauseMs = RESUME_PAUSE_MS;
    while (!done) {
      try {
        BufferedReader r = in;
        if (r == null) {
          HttpURLConnection c =
              transport.events(
                  path + "?from=" + next, next > 0 ? Long.toString(next - 1) : null, SILENCE);
          connection = c;
          if (done) {
            // Closed while connecting: close() may have missed this connection.
            c.disconnect();
            break;
          }
          r = new BufferedReader(new InputStreamReader(c.getInputStream(), StandardCharsets.UTF_8));
          in = r;
        }
        if (readEvent(r)) {
          return ready != null;
        }
        if (done) {
          break; // closed from another thread
        }
        // The answer ended without an end event (the server bounds an answer's time, or it
        // stopped): resume after a pause, longer each time no entry came in between.
        drop();
        failingSince = 0;
        sleep(resumePauseMs);
        resumePauseMs = Math.min(resumePauseMs * 2, MAX_RESUME_PAUSE_MS);
      } catch (IOException | ServerUnavailableException e) {
        drop();
        if (done) {
          break; // closed from another thread: the read ended with the connection
        }
        long now = System.nanoTime();
        if (failingSince == 0) {
          failingSince = now;
        } else if (now - failingSince > GIVE_UP.toNanos()) {
          done = true;
          throw new WorkflowException(
              "the stream at " + path + " could not be followed: " + e.getMessage(), e);
        }
        sleep(pauseMs);
        pauseMs = Math.min(pauseMs * 2, 2_000);
      }
    }
    return false;
  }

  /** Whether the iteration has ended (its end event came, it failed, or it was closed). */
  public boolean isDone() {
    return done;
  }

  @Override
  public E next() {
    if (!hasNext()) {
      throw new NoSuchElementException("the stream has ended");
    }
    E e = ready;
    ready = null;
    return e;
  }

  /**
   * Reads one event: true after an entry (now {@link #ready}) or the end event (now done), false
   * when the answer ended first.
   */
  private boolean readEvent(BufferedReader in) throws IOException {
    String event = null;
    StringBuilder data = new StringBuilder();
    for (String line; (line = in.readLine()) != null; ) {
      if (done) {
        return false;
      }
      if (line.isEmpty()) {
        if (data.length() == 0 && event == null) {
          continue; // after a comment
        }
        if ("end".equals(event)) {
          done = true;
          drop();
          return true;
        }
        JsonNode entry = Transport.JSON.readTree(data.toString());
        long offset = entry.path("offset").asLong();
        Object value = Transport.JSON.convertValue(entry.get("value"), type);
        Instant at = Instant.parse(entry.path("writtenAt").asText());
        ready = maker.make(offset, value, at);
        next = offset + 1;
        return true;
      }
      if (line.startsWith(":")) {
        continue;
      }
      if (line.startsWith("event:")) {
        event = line.substring(6).trim();
      } else if (line.startsWith("data:")) {
        data.append(line.substring(5).stripLeading());
      }
    }
    return false;
  }

  /** Lets the current answer go (on the iterating thread). */
  private void drop() {
    BufferedReader r = in;
    in = null;
    HttpURLConnection c = connection;
    connection = null;
    if (r != null) {
      try {
        r.close();
      } catch (IOException ignored) {
        // gone anyway
      }
    }
    if (c != null) {
      c.disconnect();
    }
  }

  private static void sleep(long ms) {
    try {
      Thread.sleep(ms);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new WorkflowException("interrupted while following a stream", e);
    }
  }

  /**
   * Stops following: the iteration ends and the connection closes. From any thread, without waiting
   * for a read in progress.
   */
  @Override
  public void close() {
    done = true;
    HttpURLConnection c = connection;
    if (c != null) {
      Thread t = new Thread(c::disconnect, "stream-reader-close");
      t.setDaemon(true);
      t.start();
    }
  }
}
