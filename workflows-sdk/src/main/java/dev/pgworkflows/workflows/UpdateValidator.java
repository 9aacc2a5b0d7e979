package dev.pgworkflows.workflows;

/**
 * Checks an update before its handler runs ({@link Workflow.Builder#onUpdate}): one that throws
 * refuses it, with the exception's message as the reason the caller gets (an {@link ApiException}
 * 409); nothing is journaled and the handler does not run.
 */
@FunctionalInterface
public interface UpdateValidator<U> {
  void validate(UpdateContext ctx, U input) throws Exception;
}
