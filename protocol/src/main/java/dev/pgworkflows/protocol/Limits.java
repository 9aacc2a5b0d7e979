package dev.pgworkflows.protocol;

/** Limits both ends keep to. */
public final class Limits {
  /** The most items of one batch of starts or of completions. */
  public static final int MAX_BATCH = 100;

  private Limits() {}
}
