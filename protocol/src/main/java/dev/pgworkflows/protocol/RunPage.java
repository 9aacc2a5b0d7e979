package dev.pgworkflows.protocol;

import com.fasterxml.jackson.annotation.JsonInclude;
import java.util.List;

/** A page of runs, newest first; {@code nextCursor} is present when more may follow. */
@JsonInclude(JsonInclude.Include.NON_NULL)
public record RunPage(List<Run> runs, String nextCursor) {}
