package io.kmem4j.it;

import static org.assertj.core.api.Assertions.assertThat;

import io.kmem4j.it.apps.DirectApp;
import java.io.File;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.URISyntaxException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.stream.Collectors;

/**
 * One finished run of a test application ({@code io.kmem4j.it.apps.*}) in a forked JVM: exit code,
 * all of stdout and stderr, the wall time from start to exit, and {@link ForkedJvm#describe()} for
 * failure messages. Also knows the minimal class paths the applications need.
 */
public record AppRun(String name, int exit, List<String> stdout, List<String> stderr, long wallNanos, String description) {

    /** The prefix of every line the agent writes. */
    public static final String AGENT_PREFIX = "[kmem4j]";

    /**
     * Starts {@code mainClass} from {@code classpath} with {@code jvmArgs}, waits at most
     * {@code timeout} for it to exit and returns what it did. Fails if it does not exit in time.
     */
    public static AppRun run(Jdk jdk, String name, List<String> jvmArgs, String classpath, String mainClass,
                             Duration timeout, String... programArgs) {
        long start = System.nanoTime();
        try (ForkedJvm jvm = ForkedJvm.builder(jdk, name)
                .jvmArgs(jvmArgs)
                .mainClass(classpath, mainClass)
                .programArgs(programArgs)
                .start()) {
            jvm.closeStdin();
            int exit = jvm.waitForExit(timeout);
            long wall = System.nanoTime() - start;
            return new AppRun(jvm.toString() + " on JDK " + jdk.version(), exit, jvm.stdoutLines(), jvm.stderrLines(),
                    wall, jvm.describe());
        }
    }

    /** {@code -javaagent:<agent jar>} or {@code -javaagent:<agent jar>=<options>}. */
    public static String javaagent(String options) {
        Path agent = Artifacts.agentJar();
        return "-javaagent:" + agent + (options == null || options.isEmpty() ? "" : "=" + options);
    }

    /** The directory (or jar) the test applications were compiled to, i.e. {@code target/test-classes}. */
    public static Path appClasses() {
        return codeSource(DirectApp.class);
    }

    /** Where the test JVM loads {@code className} from (without initializing it). */
    public static Path codeSource(String className) {
        try {
            return codeSource(Class.forName(className, false, AppRun.class.getClassLoader()));
        } catch (ClassNotFoundException e) {
            throw new AssertionError(className + " is not on the test class path (" + System.getProperty("java.class.path") + ")", e);
        }
    }

    private static Path codeSource(Class<?> type) {
        try {
            return Path.of(type.getProtectionDomain().getCodeSource().getLocation().toURI());
        } catch (URISyntaxException e) {
            throw new IllegalStateException(e);
        }
    }

    /** Joins class path entries with the platform's separator. */
    public static String classpath(Path... entries) {
        List<String> parts = new ArrayList<>();
        for (Path p : entries) {
            parts.add(p.toAbsolutePath().toString());
        }
        return String.join(File.pathSeparator, parts);
    }

    /** Writes {@code content} to {@code target/<dir>/<file>} and returns the directory. */
    public static Path writeFile(String dir, String file, String content) {
        Path d = Path.of("target", dir).toAbsolutePath();
        try {
            Files.createDirectories(d);
            Files.writeString(d.resolve(file), content);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        return d;
    }

    public long wallMillis() {
        return wallNanos / 1_000_000;
    }

    /** stderr lines starting with {@code prefix}. */
    public List<String> stderrStartingWith(String prefix) {
        return stderr.stream().filter(l -> l.startsWith(prefix)).collect(Collectors.toList());
    }

    /** The first stdout line starting with {@code prefix}, if any. */
    public Optional<String> stdoutLine(String prefix) {
        return stdout.stream().filter(l -> l.startsWith(prefix)).findFirst();
    }

    /** The first stdout line starting with {@code prefix}; fails naming the run if there is none. */
    public String requireLine(String prefix) {
        return stdoutLine(prefix).orElseThrow(() -> new AssertionError(
                "no stdout line starting with '" + prefix + "' in " + name + "\n" + description));
    }

    /** The key/values of the {@code [kmem4j] summary: allocations=...} line; fails if there is none. */
    public Map<String, String> summaryCounters() {
        Optional<String> line = stderr.stream().filter(l -> l.startsWith("[kmem4j] summary: allocations=")).findFirst();
        assertThat(line).as("a '[kmem4j] summary: allocations=...' line on stderr of %s\n%s", name, description).isPresent();
        Map<String, String> all = new java.util.LinkedHashMap<>(KeyValues.parse(line.get()));
        stderr.stream().filter(l -> l.startsWith("[kmem4j] summary: remoteFreesSent="))
                .forEach(l -> all.putAll(KeyValues.parse(l)));
        return all;
    }

    /** {@code allocations=} of the summary line. */
    public long summaryAllocations() {
        return Long.parseLong(summaryCounters().get("allocations"));
    }

    @Override
    public String toString() {
        return name;
    }
}
