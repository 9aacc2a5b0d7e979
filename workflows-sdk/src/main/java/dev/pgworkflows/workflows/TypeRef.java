package dev.pgworkflows.workflows;

import java.lang.reflect.ParameterizedType;
import java.lang.reflect.Type;

/**
 * A full generic type for inputs and outputs: {@code new TypeRef<List<Order>>() {}}.
 *
 * @param <T> the type captured
 */
public abstract class TypeRef<T> {
  private final Type type;

  protected TypeRef() {
    Type superType = getClass().getGenericSuperclass();
    if (!(superType instanceof ParameterizedType p)) {
      throw new IllegalArgumentException("TypeRef needs a type argument: new TypeRef<X>() {}");
    }
    this.type = p.getActualTypeArguments()[0];
  }

  private TypeRef(Type type) {
    this.type = type;
  }

  /** A TypeRef for a plain class. */
  public static <T> TypeRef<T> of(Class<T> type) {
    return new TypeRef<T>(type) {};
  }

  public Type type() {
    return type;
  }
}
