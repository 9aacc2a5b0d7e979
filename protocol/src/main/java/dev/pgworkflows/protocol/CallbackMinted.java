package dev.pgworkflows.protocol;

import com.fasterxml.jackson.annotation.JsonInclude;

/**
 * {@code POST /v1/workflows/{name}/runs/{runId}/callbacks/{callback}}: a run's callback, its token
 * (the only credential), the URL that takes it (absent when minted without a server), when it stops
 * working, and whether this call minted it (a repeat answers the callback minted before).
 */
@JsonInclude(JsonInclude.Include.NON_NULL)
public record CallbackMinted(String token, String url, String expiresAt, boolean created) {}
