import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Enumeration;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.jar.JarFile;
import java.util.zip.ZipEntry;
import javax.xml.parsers.DocumentBuilderFactory;
import org.w3c.dom.Element;
import org.w3c.dom.Node;

/**
 * What a user can depend on, checked after every module before the BOM was built (the bom module
 * runs this in verify; its exec-maven-plugin depends on every published library, which is what
 * makes Maven build them first). Every jar module that is not an application is published, and each
 * must have: a jar whose manifest names an Automatic-Module-Name that is the root of every package
 * in it, a sources jar, a javadoc jar, an entry in the BOM and a dependency of the check's plugin.
 * The other way round, every BOM entry must be a published module of this build: the BOM lists only
 * pgworkflows' artifacts that exist, at the project's version, and no application.
 *
 * <p>Run by the build as {@code java PublishedArtifacts.java <root> <sourceSkip> <javadocSkip>}.
 */
public class PublishedArtifacts {
  /** Runnable jars, not libraries: nobody's build depends on them. */
  static final Set<String> APPLICATIONS =
      Set.of("pgworkflows-cli", "examples", "examples-spring-orders", "bench");

  final List<String> problems = new ArrayList<>();

  public static void main(String[] args) throws Exception {
    Path root = Path.of(args[0]).toRealPath();
    boolean sourcesSkipped = Boolean.parseBoolean(args[1]);
    boolean javadocSkipped = Boolean.parseBoolean(args[2]);
    PublishedArtifacts check = new PublishedArtifacts();
    List<String> published = check.run(root, !sourcesSkipped, !javadocSkipped);
    if (!check.problems.isEmpty()) {
      System.err.println("Published artifacts: " + check.problems.size() + " problem(s)");
      check.problems.forEach(p -> System.err.println("  - " + p));
      System.exit(1);
    }
    System.out.println("Published artifacts checked: " + String.join(", ", published));
  }

  List<String> run(Path root, boolean wantSources, boolean wantJavadoc) throws Exception {
    Element parent = read(root.resolve("pom.xml"));
    String groupId = text(parent, "groupId");
    String version = text(parent, "version");
    List<String> modules = texts(child(parent, "modules"), "module");

    Map<String, String> moduleNames = new LinkedHashMap<>();
    List<String> published = new ArrayList<>();
    List<String> built = new ArrayList<>();
    for (String module : modules) {
      Path dir = root.resolve(module);
      Element pom = read(dir.resolve("pom.xml"));
      String artifactId = text(pom, "artifactId");
      built.add(artifactId);
      String packaging = text(pom, "packaging");
      if (packaging != null && !packaging.equals("jar") || APPLICATIONS.contains(artifactId)) {
        continue;
      }
      published.add(artifactId);
      Path target = dir.resolve("target");
      String base = artifactId + "-" + version;
      String name = checkJar(target.resolve(base + ".jar"));
      if (name != null) {
        String other = moduleNames.putIfAbsent(name, artifactId);
        if (other != null) {
          problems.add(artifactId + " and " + other + " share the module name " + name);
        }
        if (wantSources) {
          checkHas(target.resolve(base + "-sources.jar"), name.replace('.', '/') + "/", ".java");
        }
      }
      if (wantJavadoc) {
        checkHas(target.resolve(base + "-javadoc.jar"), "", "index.html");
      }
    }

    Element bom = read(root.resolve("bom/pom.xml"));
    if (child(bom, "parent") != null) {
      problems.add("bom/pom.xml has a parent: it would pass the parent's third-party pins on");
    }
    if (!version.equals(text(bom, "version")) || !groupId.equals(text(bom, "groupId"))) {
      problems.add("bom/pom.xml is not " + groupId + ":*:" + version + " as pom.xml is");
    }
    List<String> listed = new ArrayList<>();
    Element managed = child(bom, "dependencyManagement");
    for (Element dependency : children(managed == null ? null : child(managed, "dependencies"))) {
      String artifactId = text(dependency, "artifactId");
      listed.add(artifactId);
      if (!groupId.equals(text(dependency, "groupId"))) {
        problems.add("the BOM manages " + text(dependency, "groupId") + ":" + artifactId);
      }
      if (!"${project.version}".equals(text(dependency, "version"))) {
        problems.add("the BOM's " + artifactId + " is not at ${project.version}");
      }
      if (text(dependency, "scope") != null || text(dependency, "type") != null) {
        problems.add("the BOM's " + artifactId + " sets a scope or type");
      }
      if (APPLICATIONS.contains(artifactId)) {
        problems.add("the BOM lists " + artifactId + ", an application");
      } else if (!built.contains(artifactId)) {
        problems.add("the BOM lists " + artifactId + ", which is no module of pom.xml");
      } else if (!published.contains(artifactId)) {
        problems.add("the BOM lists " + artifactId + ", which is not a published library");
      }
    }
    for (String artifactId : published) {
      if (!listed.contains(artifactId)) {
        problems.add(artifactId + " is published but bom/pom.xml does not list it");
      }
    }

    // What orders the build: the check's plugin depends on each published library.
    List<String> ordered = new ArrayList<>();
    for (Element plugin : children(child(child(bom, "build"), "plugins"))) {
      if ("exec-maven-plugin".equals(text(plugin, "artifactId"))) {
        for (Element dependency : children(child(plugin, "dependencies"))) {
          if (groupId.equals(text(dependency, "groupId"))) {
            ordered.add(text(dependency, "artifactId"));
          }
        }
      }
    }
    for (String artifactId : published) {
      if (!ordered.contains(artifactId)) {
        problems.add(
            artifactId
                + " is published but no dependency of bom/pom.xml's exec-maven-plugin: without"
                + " one, Maven may build the bom (and run this check) before it");
      }
    }
    for (String artifactId : ordered) {
      if (!published.contains(artifactId)) {
        problems.add(
            "bom/pom.xml's exec-maven-plugin depends on " + artifactId + ", no published library");
      }
    }
    return published;
  }

  /** The jar's Automatic-Module-Name, checked against its packages; null when it has none. */
  String checkJar(Path jar) throws IOException {
    if (!Files.isRegularFile(jar)) {
      problems.add(jar + " is missing (build the modules before bom)");
      return null;
    }
    try (JarFile file = new JarFile(jar.toFile())) {
      String name =
          file.getManifest() == null
              ? null
              : file.getManifest().getMainAttributes().getValue("Automatic-Module-Name");
      if (name == null || !name.matches("[A-Za-z_]\\w*(\\.[A-Za-z_]\\w*)*")) {
        problems.add(jar.getFileName() + ": no valid Automatic-Module-Name (" + name + ")");
        return null;
      }
      String prefix = name.replace('.', '/') + "/";
      for (Enumeration<? extends ZipEntry> e = file.entries(); e.hasMoreElements(); ) {
        String entry = e.nextElement().getName();
        if (entry.endsWith(".class") && !entry.startsWith(prefix)) {
          problems.add(jar.getFileName() + ": " + entry + " lies outside module " + name);
          break;
        }
      }
      return name;
    }
  }

  void checkHas(Path jar, String prefix, String suffix) throws IOException {
    if (!Files.isRegularFile(jar)) {
      problems.add(jar + " is missing");
      return;
    }
    try (JarFile file = new JarFile(jar.toFile())) {
      boolean found =
          file.stream()
              .anyMatch(e -> e.getName().startsWith(prefix) && e.getName().endsWith(suffix));
      if (!found) {
        problems.add(jar.getFileName() + " has no " + prefix + "*" + suffix);
      }
    }
  }

  static Element read(Path pom) throws Exception {
    return DocumentBuilderFactory.newInstance()
        .newDocumentBuilder()
        .parse(pom.toFile())
        .getDocumentElement();
  }

  static Element child(Element parent, String name) {
    return children(parent).stream()
        .filter(e -> e.getTagName().equals(name))
        .findFirst()
        .orElse(null);
  }

  static List<Element> children(Element parent) {
    List<Element> out = new ArrayList<>();
    if (parent != null) {
      for (Node n = parent.getFirstChild(); n != null; n = n.getNextSibling()) {
        if (n instanceof Element e) {
          out.add(e);
        }
      }
    }
    return out;
  }

  static String text(Element parent, String name) {
    Element e = child(parent, name);
    return e == null ? null : e.getTextContent().trim();
  }

  static List<String> texts(Element parent, String name) {
    return children(parent).stream()
        .filter(e -> e.getTagName().equals(name))
        .map(e -> e.getTextContent().trim())
        .toList();
  }
}
