package dev.pgworkflows.workflows;

/**
 * A named stream of output of the current run ({@link WorkflowContext#stream}): entries a step or
 * the body appends as it goes, which readers see at once ({@link Runs#stream}). Each write is sent
 * when it is made, not held until the step is journaled.
 *
 * <p>On retry and replay: an entry is known by its writer and position, the step's name and the
 * index of the write within the step's attempt (or, for the body, the index of the body's write). A
 * retried attempt or a replayed body writes the same identities again and the server skips those it
 * holds, so nothing is duplicated. The entries of a failed attempt stay (they are not rolled back),
 * and a retried step adds only the entries past those an earlier attempt wrote: its first writes,
 * repeats of identities already stored, are dropped even when their values differ.
 *
 * <p>Write from the body's thread or from the step's own thread: a write from any other thread (one
 * the step started, say) throws {@link IllegalStateException}, since its place among the body's
 * writes would not be the same on a replay; so does a write from an attempt's thread left running
 * after the attempt timed out, which would otherwise take the identities of the next attempt's
 * writes. A body's write first sends the completion of the step before it, if not sent yet.
 */
public interface RunStream {
  /** The stream's name: 1 to 128 characters of a-z, A-Z, 0-9, ".", "_" and "-". */
  String name();

  /**
   * Appends {@code value} (any JSON-serialisable value, at most 64 KiB as JSON). Returns once the
   * server has stored it. Throws {@link ApiException} (409) when the stream is closed, the run has
   * ended, the stream holds 100,000 entries or it would be the run's 101st stream, and {@link
   * IllegalStateException} from a thread that may not write (see above).
   */
  void write(Object value);

  /**
   * Closes the stream: readers end once they have read every entry, and later writes fail. A stream
   * also ends when its run ends. Closing a closed stream does nothing.
   */
  void close();
}
