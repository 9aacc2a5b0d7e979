package dev.pgworkflows.protocol;

import java.util.List;

/** The search attributes defined, by name. */
public record SearchAttributes(List<SearchAttribute> attributes) {}
