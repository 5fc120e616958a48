package io.kmem4j.it;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.jar.Attributes;
import java.util.jar.JarEntry;
import java.util.jar.JarFile;
import java.util.jar.Manifest;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Collectors;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * The agent jar must not leak anything into the application's namespace (case C15): the one class
 * the application's class loader can see is {@code Kmem4jAgent}; everything else sits under
 * {@code kmem4j-inf/} for the agent's private loader; every bundled library is relocated under
 * {@code io/kmem4j/shaded/}; no {@code META-INF/services} file names an unrelocated type; no
 * multi-release class keeps a library's original name; no Logback configuration is bundled.
 */
class AgentJarContentsIT {

    private static final String AGENT_CLASS = "io.kmem4j.agent.Kmem4jAgent";
    private static final String HIDDEN = "kmem4j-inf/";
    private static final List<String> SHADED_LIBRARIES = List.of("org/slf4j/", "ch/qos/logback/", "net/bytebuddy/", "org/agrona/");
    /** {@code META-INF/versions/<N>/} */
    private static final Pattern VERSIONED = Pattern.compile("^META-INF/versions/(\\d+)/(.*)$");

    private static List<String> entries;
    private static Manifest manifest;
    private static List<String> serviceFiles;
    private static List<String> serviceProviderLines;

    @BeforeAll
    static void readJar() {
        try (JarFile jar = new JarFile(Artifacts.agentJar().toFile())) {
            manifest = jar.getManifest();
            entries = Collections.list(jar.entries()).stream().map(JarEntry::getName).collect(Collectors.toList());
            serviceFiles = entries.stream().filter(n -> n.startsWith("META-INF/services/") && !n.endsWith("/"))
                    .collect(Collectors.toList());
            serviceProviderLines = new ArrayList<>();
            for (String name : serviceFiles) {
                try (InputStream in = jar.getInputStream(jar.getJarEntry(name))) {
                    for (String line : new String(in.readAllBytes(), StandardCharsets.UTF_8).split("\\R")) {
                        String provider = line.replaceAll("#.*", "").trim();
                        if (!provider.isEmpty()) {
                            serviceProviderLines.add(name + ": " + provider);
                        }
                    }
                }
            }
        } catch (IOException e) {
            throw new UncheckedIOException("cannot read " + Artifacts.agentJar(), e);
        }
        assertThat(entries).as("entries of %s", Artifacts.agentJar()).isNotEmpty();
    }

    @Test
    void manifestDeclaresTheAgent() {
        assertThat(manifest).as("manifest of %s", Artifacts.agentJar()).isNotNull();
        Attributes main = manifest.getMainAttributes();
        assertThat(main.getValue("Premain-Class")).as("Premain-Class").isEqualTo(AGENT_CLASS);
        assertThat(main.getValue("Agent-Class")).as("Agent-Class").isEqualTo(AGENT_CLASS);
        assertThat(main.getValue("Can-Retransform-Classes")).as("Can-Retransform-Classes").isEqualTo("true");
        assertThat(main.getValue("Main-Class")).as("Main-Class (java -jar kmem4j-agent.jar attach ...)").isEqualTo(AGENT_CLASS);
        assertThat(entries).as("the agent class itself").contains(AGENT_CLASS.replace('.', '/') + ".class");
    }

    @Test
    void exactlyOneClassIsVisibleToTheApplication() {
        List<String> visible = entries.stream()
                .filter(n -> n.endsWith(".class") && !n.startsWith(HIDDEN))
                .collect(Collectors.toList());
        assertThat(visible).as(".class entries outside %s", HIDDEN)
                .containsExactly(AGENT_CLASS.replace('.', '/') + ".class");
    }

    @Test
    void noUnrelocatedLibraryAnywhere() {
        List<String> leaked = entries.stream()
                .map(n -> n.startsWith(HIDDEN) ? n.substring(HIDDEN.length()) : n)
                .filter(n -> SHADED_LIBRARIES.stream().anyMatch(n::startsWith))
                .collect(Collectors.toList());
        assertThat(leaked).as("entries of bundled libraries outside io/kmem4j/shaded/").isEmpty();
        for (String library : SHADED_LIBRARIES) {
            assertThat(entries).as("the relocated copy of %s", library)
                    .anyMatch(n -> n.startsWith(HIDDEN + "io/kmem4j/shaded/" + library) && n.endsWith(".class"));
        }
    }

    @Test
    void noServiceFileNamesAnUnrelocatedType() {
        assertThat(entries).as("SLF4J provider registration").doesNotContain("META-INF/services/org.slf4j.spi.SLF4JServiceProvider",
                HIDDEN + "META-INF/services/org.slf4j.spi.SLF4JServiceProvider");
        List<String> badFiles = serviceFiles.stream()
                .filter(n -> !n.startsWith("META-INF/services/io.kmem4j.") && !n.startsWith("META-INF/services/java.")
                        && !n.startsWith("META-INF/services/javax.") && !n.startsWith("META-INF/services/jdk."))
                .collect(Collectors.toList());
        assertThat(badFiles).as("service files for a type other than io.kmem4j.* / JDK types").isEmpty();
        List<String> badProviders = serviceProviderLines.stream()
                .filter(l -> !l.substring(l.indexOf(": ") + 2).startsWith("io.kmem4j."))
                .collect(Collectors.toList());
        assertThat(badProviders).as("service providers outside io.kmem4j.*").isEmpty();
    }

    @Test
    void noLogbackConfigurationAnywhere() {
        List<String> configs = entries.stream()
                .filter(n -> {
                    String file = n.substring(n.lastIndexOf('/') + 1);
                    return file.equals("logback.xml") || file.equals("logback-test.xml") || file.equals("logback.groovy")
                            || file.equals("logback-test.groovy");
                })
                .collect(Collectors.toList());
        assertThat(configs).as("Logback configuration files in the agent jar").isEmpty();
    }

    @Test
    void everyClassIsUnderIoKmem4j() {
        List<String> outside = entries.stream()
                .map(n -> n.startsWith(HIDDEN) ? n.substring(HIDDEN.length()) : n)
                .filter(n -> n.endsWith(".class") && !n.startsWith("META-INF/"))
                .filter(n -> !n.startsWith("io/kmem4j/"))
                .collect(Collectors.toList());
        assertThat(outside).as(".class entries outside io/kmem4j/").isEmpty();
    }

    /**
     * Multi-release classes too: {@code META-INF/versions/N/io/kmem4j/...} only. A class left under
     * its original library name (e.g. {@code META-INF/versions/24/net/bytebuddy/...}) is found by a
     * JVM of that version under that name, from the system class path the agent jar is on, and
     * shadows the application's own copy of the library.
     */
    @Test
    void everyMultiReleaseClassIsUnderIoKmem4j() {
        List<String> outside = entries.stream()
                .filter(n -> n.endsWith(".class"))
                .map(n -> n.startsWith(HIDDEN) ? n.substring(HIDDEN.length()) : n)
                .map(VERSIONED::matcher)
                .filter(Matcher::matches)
                .filter(m -> !m.group(2).startsWith("io/kmem4j/"))
                .map(m -> m.group(0))
                .collect(Collectors.toList());
        assertThat(outside).as(".class entries outside META-INF/versions/N/io/kmem4j/ (%s of them are bundled"
                + " libraries under their original names: %s)", outside.size(), SHADED_LIBRARIES).isEmpty();
    }
}
