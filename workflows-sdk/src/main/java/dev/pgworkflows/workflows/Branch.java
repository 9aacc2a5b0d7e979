package dev.pgworkflows.workflows;

import java.lang.reflect.Type;

/**
 * One branch of a parallel group ({@link StepContext#parallel}): a {@code run} step with a name of
 * its own, the type of its result, its code and its retry policy. Make one with {@code
 * Branch.of(...)}.
 *
 * @param <T> the branch's result
 * @param name the step's name: unique within the run, as every step's
 * @param type the result's type, as the journaled JSON is read back
 * @param code the step code
 * @param retry how a failing attempt is retried, in the branch's own thread
 */
public record Branch<T>(String name, Type type, StepContext.Fn<T> code, Retry retry) {

  public Branch {
    if (name == null) {
      throw new IllegalArgumentException("a branch needs a name");
    }
    if (type == null) {
      throw new IllegalArgumentException("branch " + name + " needs a result type");
    }
    if (code == null) {
      throw new IllegalArgumentException("branch " + name + " needs code to run");
    }
    if (retry == null) {
      retry = Retry.DEFAULT;
    }
  }

  /** A branch with the default {@link Retry}. */
  public static <T> Branch<T> of(String name, Class<T> type, StepContext.Fn<T> code) {
    return new Branch<>(name, type, code, Retry.DEFAULT);
  }

  public static <T> Branch<T> of(String name, Class<T> type, StepContext.Fn<T> code, Retry retry) {
    return new Branch<>(name, type, code, retry);
  }

  /** For generic results: {@code Branch.of("load", new TypeRef<List<Item>>() {}, ...)}. */
  public static <T> Branch<T> of(
      String name, TypeRef<T> type, StepContext.Fn<T> code, Retry retry) {
    return new Branch<>(name, type == null ? null : type.type(), code, retry);
  }

  /** A branch without a result (its place in the group's results holds null). */
  public static Branch<Void> of(String name, StepContext.Action action) {
    return of(name, action, Retry.DEFAULT);
  }

  public static Branch<Void> of(String name, StepContext.Action action, Retry retry) {
    if (action == null) {
      throw new IllegalArgumentException("branch " + name + " needs code to run");
    }
    return new Branch<>(
        name,
        Void.class,
        () -> {
          action.run();
          return null;
        },
        retry);
  }
}
