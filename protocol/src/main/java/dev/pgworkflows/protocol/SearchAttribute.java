package dev.pgworkflows.protocol;

import com.fasterxml.jackson.annotation.JsonInclude;
import java.time.Instant;

/**
 * A search attribute runs may carry: its name, its type ({@code text}, {@code keyword_list}, {@code
 * number}, {@code boolean} or {@code time}) and when it was defined. {@code created} answers a
 * definition: false when the attribute was defined already with that type.
 */
@JsonInclude(JsonInclude.Include.NON_NULL)
public record SearchAttribute(String name, String type, Instant createdAt, Boolean created) {}
