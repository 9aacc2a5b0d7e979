package dev.pgworkflows.spring;

import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.springframework.boot.context.properties.ConfigurationProperties;
import org.springframework.boot.context.properties.bind.DefaultValue;

/**
 * The {@code pgworkflows.*} properties. Values are checked as they bind, so a bad one stops the
 * application at startup with a message naming the property.
 *
 * @param mode {@code server} (the default): the client and workers work through the server at
 *     {@code url}; {@code embedded}: with no server, over the application's DataSource (the engine
 *     in the application's JVM, see {@link dev.pgworkflows.workflows.PgWorkflows}), which needs
 *     {@code dev.pgworkflows:workflows-engine} in the build
 * @param url the server, an {@code http://} or {@code https://} URL (unused when embedded)
 * @param token the bearer token of the {@link dev.pgworkflows.workflows.WorkflowClient} bean
 *     (scopes {@code start} and {@code read}; {@code admin} to cancel); none for a server without
 *     tokens
 * @param worker how this application serves its {@link dev.pgworkflows.workflows.Workflow} beans
 * @param migrate when embedded, whether the schema is migrated at startup (default true; false
 *     leaves it to a deploy step or a server, and startup fails on a schema of another version)
 */
@ConfigurationProperties("pgworkflows")
public record PgWorkflowsProperties(
    @DefaultValue("server") String mode,
    @DefaultValue("http://localhost:7700") String url,
    String token,
    @DefaultValue Worker worker,
    @DefaultValue("true") boolean migrate) {

  public PgWorkflowsProperties {
    if (!"server".equals(mode) && !"embedded".equals(mode)) {
      throw new IllegalArgumentException(
          "pgworkflows.mode must be server or embedded, got " + mode);
    }
    if (url == null || !(url.startsWith("http://") || url.startsWith("https://"))) {
      throw new IllegalArgumentException(
          "pgworkflows.url must be an http:// or https:// URL, got " + url);
    }
    // An empty value (as an unset environment variable leaves it) means no token.
    token = token == null || token.isBlank() ? null : token;
  }

  /** Whether the engine runs in this application over its DataSource, with no server. */
  public boolean embedded() {
    return "embedded".equals(mode);
  }

  /** Without the token itself, which a log of the properties must not show. */
  @Override
  public String toString() {
    return "PgWorkflowsProperties[mode="
        + mode
        + ", url="
        + url
        + ", token="
        + (token == null ? "none" : "***")
        + ", worker="
        + worker
        + "]";
  }

  /**
   * The workers started for the application's {@link dev.pgworkflows.workflows.Workflow} beans.
   *
   * @param enabled whether workers start at all (an application that only starts runs sets false)
   * @param token the workers' bearer token (scope worker); pgworkflows.token when unset
   * @param concurrency runs each worker handles at once, 1 to 1000
   * @param pollWait how long one task stream or long poll lasts, 0 to 30 s; a closing worker may
   *     wait this long for its poll to return
   * @param shutdownGracePeriod how long closing waits for steps in flight before it interrupts them
   *     (default 20 s, inside Spring's default 30 s shutdown phase timeout)
   * @param versions per workflow name, the versions its worker claims (default: the bean's own)
   */
  public record Worker(
      @DefaultValue("true") boolean enabled,
      String token,
      @DefaultValue("16") int concurrency,
      @DefaultValue("30s") Duration pollWait,
      @DefaultValue("20s") Duration shutdownGracePeriod,
      Map<String, List<Integer>> versions) {

    public Worker {
      if (concurrency < 1 || concurrency > 1000) {
        throw new IllegalArgumentException(
            "pgworkflows.worker.concurrency must be 1 to 1000, got " + concurrency);
      }
      if (pollWait.isNegative() || pollWait.compareTo(Duration.ofSeconds(30)) > 0) {
        throw new IllegalArgumentException(
            "pgworkflows.worker.poll-wait must be 0 to 30 seconds, got " + pollWait);
      }
      if (shutdownGracePeriod.isNegative()) {
        throw new IllegalArgumentException(
            "pgworkflows.worker.shutdown-grace-period must not be negative, got "
                + shutdownGracePeriod);
      }
      token = token == null || token.isBlank() ? null : token;
      versions = versions == null ? Map.of() : Map.copyOf(versions);
      versions.forEach(
          (workflow, list) -> {
            if (list.isEmpty() || list.stream().anyMatch(v -> v == null || v < 1)) {
              throw new IllegalArgumentException(
                  "pgworkflows.worker.versions."
                      + workflow
                      + " must list versions of 1 or more, got "
                      + list);
            }
          });
    }

    /** Without the token itself. */
    @Override
    public String toString() {
      return "Worker[enabled="
          + enabled
          + ", token="
          + (token == null ? "none" : "***")
          + ", concurrency="
          + concurrency
          + ", pollWait="
          + pollWait
          + ", shutdownGracePeriod="
          + shutdownGracePeriod
          + ", versions="
          + versions
          + "]";
    }

    /** The token workers send: their own, or the client's. */
    String tokenOr(String fallback) {
      return token != null ? token : fallback;
    }
  }
}
