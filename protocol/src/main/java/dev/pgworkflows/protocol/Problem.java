package dev.pgworkflows.protocol;

import com.fasterxml.jackson.annotation.JsonInclude;

/**
 * An error, as {@code application/problem+json} (RFC 9457).
 *
 * @param field the request field at fault, for a 400
 * @param requestId the id the server logged the request under
 */
@JsonInclude(JsonInclude.Include.NON_NULL)
public record Problem(
    String type, String title, int status, String detail, String field, String requestId) {}
