package dev.pgworkflows.workflows;

/**
 * Answers an update sent to a run ({@link Workflow.Builder#onUpdate}): its return value is the
 * caller's answer. A handler that throws fails the update (the caller gets {@link
 * UpdateFailedException}); the run goes on. It is called once per update: its answer is journaled,
 * and a repeat of the update's idempotency key gets that answer again.
 */
@FunctionalInterface
public interface UpdateHandler<U, R> {
  R handle(UpdateContext ctx, U input) throws Exception;
}
