package dev.pgworkflows.workflows;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.lang.reflect.Constructor;
import java.lang.reflect.Field;
import java.lang.reflect.Method;
import java.lang.reflect.Modifier;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;

/**
 * The SDK's public API, every public type of {@code dev.pgworkflows.workflows} and its public
 * members, is the one written down in {@code api/public-api.txt}: a change to it shows in review
 * beside the changelog entry it needs. {@code -Dapi.write=true} writes the file anew.
 */
class PublicApiTest {
  private static final Path RECORDED = Path.of("api/public-api.txt");

  @Test
  void thePublicApiIsTheRecordedOne() throws Exception {
    List<String> now = api();
    if (Boolean.getBoolean("api.write")) {
      Files.createDirectories(RECORDED.getParent());
      Files.write(RECORDED, now);
    }
    assertThat(now)
        .as("the public API against %s (-Dapi.write=true records a change)", RECORDED)
        .containsExactlyElementsOf(Files.readAllLines(RECORDED));
  }

  @Test
  void optionsAreMadeOnlyByTheirBuilders() {
    assertThat(StartOptions.class.getConstructors()).isEmpty();
    assertThat(ChildOptions.class.getConstructors()).isEmpty();
    assertThat(StartOptions.Builder.class.getConstructors()).isEmpty();
    assertThat(ChildOptions.Builder.class.getConstructors()).isEmpty();
  }

  static List<String> api() throws IOException, ClassNotFoundException {
    Path root = Path.of("target/classes/dev/pgworkflows/workflows");
    List<String> names;
    try (Stream<Path> files = Files.list(root)) {
      names =
          files
              .map(p -> p.getFileName().toString())
              .filter(n -> n.endsWith(".class") && !n.equals("package-info.class"))
              .map(n -> "dev.pgworkflows.workflows." + n.substring(0, n.length() - 6))
              .sorted()
              .toList();
    }
    List<String> out = new ArrayList<>();
    for (String name : names) {
      Class<?> c = Class.forName(name);
      if (!Modifier.isPublic(c.getModifiers()) || c.isSynthetic() || c.isAnonymousClass()) {
        continue;
      }
      if (c.isMemberClass() && !isPublicAllTheWay(c)) {
        continue;
      }
      out.add(describe(c));
      List<String> members = new ArrayList<>();
      for (Field f : c.getDeclaredFields()) {
        if (Modifier.isPublic(f.getModifiers()) && !f.isSynthetic()) {
          members.add("  " + f.toGenericString());
        }
      }
      for (Constructor<?> k : c.getDeclaredConstructors()) {
        if (Modifier.isPublic(k.getModifiers()) && !k.isSynthetic()) {
          members.add("  " + k.toGenericString());
        }
      }
      for (Method m : c.getDeclaredMethods()) {
        if (Modifier.isPublic(m.getModifiers()) && !m.isSynthetic() && !m.isBridge()) {
          members.add("  " + m.toGenericString());
        }
      }
      members.sort(null);
      out.addAll(members);
    }
    return out.stream().map(l -> l.replace("dev.pgworkflows.workflows.", "")).toList();
  }

  private static boolean isPublicAllTheWay(Class<?> c) {
    for (Class<?> k = c; k != null; k = k.getEnclosingClass()) {
      if (!Modifier.isPublic(k.getModifiers())) {
        return false;
      }
    }
    return true;
  }

  private static String describe(Class<?> c) {
    String kind =
        c.isRecord()
            ? "record"
            : c.isEnum()
                ? "enum"
                : c.isAnnotation() ? "@interface" : c.isInterface() ? "interface" : "class";
    return kind + " " + c.getName();
  }
}
