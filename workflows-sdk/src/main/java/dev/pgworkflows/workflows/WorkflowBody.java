package dev.pgworkflows.workflows;

/**
 * A workflow's code. It is run from the top on every resume: journaled steps return their stored
 * results without running, so code outside steps must be deterministic and free of side effects.
 */
@FunctionalInterface
public interface WorkflowBody<I, O> {
  O run(WorkflowContext ctx, I input) throws Exception;
}
