package io.kmem4j.it;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Files;
import java.nio.file.Path;

/**
 * The jars under test. Failsafe passes their absolute paths as the system properties
 * {@code kmem4j.agent.jar} and {@code kmem4j.samples.jar}; when those are missing (e.g. a test
 * started from an IDE in the it-tests folder) the sibling {@code target} folders are used.
 */
public final class Artifacts {

    private Artifacts() {
    }

    public static Path agentJar() {
        return existing("kmem4j.agent.jar", "../agent/target/kmem4j-agent.jar", "agent");
    }

    public static Path samplesJar() {
        return existing("kmem4j.samples.jar", "../sample-apps/target/kmem4j-samples.jar", "sample-apps");
    }

    /**
     * The class path entry of the jars that maven-dependency-plugin copies to {@code target/<dir>} in
     * pre-integration-test (it-tests/pom.xml): {@code <absolute dir>/*}.
     */
    public static String copiedJars(String dir) {
        Path d = Path.of("target", dir).toAbsolutePath();
        assertThat(Files.isDirectory(d)).as("%s (filled by maven-dependency-plugin in pre-integration-test;"
                + " run ./mvnw -pl it-tests -am verify)", d).isTrue();
        return d + java.io.File.separator + "*";
    }

    private static Path existing(String property, String fallback, String module) {
        String configured = System.getProperty(property);
        Path jar = Path.of(configured != null && !configured.isBlank() ? configured : fallback)
                .toAbsolutePath().normalize();
        assertThat(Files.isRegularFile(jar))
                .as("%s not found at %s (system property %s); build it first, e.g. "
                        + "./mvnw -B -pl %s -am package -DskipTests", module, jar, property, module)
                .isTrue();
        return jar;
    }
}
