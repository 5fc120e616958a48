package io.kmem4j.it;

import java.nio.file.Files;
import java.nio.file.Path;

/**
 * One JDK installation a forked JVM can be started from.
 *
 * @param home    the real path of its JAVA_HOME
 * @param version the {@code JAVA_VERSION} from its {@code release} file, e.g. {@code 25.0.3}
 * @param feature the feature (major) version, e.g. {@code 25}
 */
public record Jdk(Path home, String version, int feature) {

    /** {@code <home>/bin/java}. */
    public Path javaExecutable() {
        Path java = home.resolve("bin").resolve("java");
        if (!Files.isExecutable(java)) {
            Path exe = home.resolve("bin").resolve("java.exe");
            if (Files.isExecutable(exe)) {
                return exe;
            }
        }
        return java;
    }

    /** A short label for names of forked JVMs and log lines, e.g. {@code jdk25}. */
    public String label() {
        return "jdk" + feature;
    }

    /** Used as the display name of parameterized tests. */
    @Override
    public String toString() {
        return "JDK " + version + " (" + home + ")";
    }
}
