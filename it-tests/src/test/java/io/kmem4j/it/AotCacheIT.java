package io.kmem4j.it;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.stream.Collectors;

import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

/**
 * An AOT cache trained with the agent attached (JDK 25 and later: {@code -XX:AOTCacheOutput}, JEP 514 on
 * JEP 483's cache) works with the same {@code -javaagent} in a later run, as the README tells operators:
 * the JVM maps the cache and keeps its archived module graph (which any agent gives up without a cache),
 * the agent still serves the program's direct buffers, and the program's output is that of the
 * training run. On JDK 25 and 26 the cache also holds most of kmem4j's own classes; JDK 27 archives
 * classes of other loaders only when loaded from a {@code file:} code source ({@code -Xlog:aot}: "Skipping
 * ...: Not loaded from "file:" code source"), which those of the agent's private loader (inside the agent
 * jar) are not, so there the count is printed, not asserted. Before JDK 25 the test is skipped (the
 * one-step training option does not exist).
 */
class AotCacheIT {
    private static final Duration RUN_TIMEOUT = Duration.ofSeconds(120);
    private static final int MESSAGES = 2000;

    @ParameterizedTest(name = "{0}")
    @MethodSource("io.kmem4j.it.TestJdks#full")
    void aCacheTrainedWithTheAgentServesTheAgentInALaterRun(Jdk jdk) throws IOException {
        assumeTrue(jdk.feature() >= 25, "-XX:AOTCacheOutput is a JDK 25+ option; " + jdk);
        Path dir = Files.createDirectories(Path.of("target", "aot-" + jdk.label()).toAbsolutePath());
        Path cache = dir.resolve("echo.aot");
        Files.deleteIfExists(cache); // a cache left by an earlier run must not pass for this run's
        Path aotLog = dir.resolve("aot.log");
        Path classLog = dir.resolve("classes.log");
        String agent = AppRun.javaagent("summary=true");

        AppRun training = echo(jdk, "aot-train-", List.of(agent, "-XX:AOTCacheOutput=" + cache));
        assertThat(training.exit()).as("exit code of %s\n%s", training, training.description()).isZero();
        assertThat(cache).as("the cache written by %s\n%s", training, training.description()).isNotEmptyFile();

        // AOTMode=on: a cache the JVM cannot use fails the start instead of being ignored
        AppRun cached = echo(jdk, "aot-run-", List.of(agent, "-XX:AOTMode=on", "-XX:AOTCache=" + cache,
                "-Xlog:aot=info:file=" + aotLog, "-Xlog:class+load=info:file=" + classLog));
        assertThat(cached.exit()).as("exit code of %s\n%s", cached, cached.description()).isZero();
        assertThat(Files.readAllLines(aotLog)).as("the JVM's AOT log %s, %s", aotLog, cached)
                .anyMatch(l -> l.contains("Opened AOT cache"))
                .anyMatch(l -> l.contains("full module graph: enabled"));
        assertThat(cached.requireLine("echo: messages=")).as("the program's result, %s", cached)
                .isEqualTo(training.requireLine("echo: messages="))
                .contains("verified=true mismatches=0");
        // every message's payload is one allocateDirect; a few may meet the allocator's build and go to the JDK
        assertThat(cached.summaryAllocations()).as("buffers the agent served, %s", cached)
                .isGreaterThanOrEqualTo(MESSAGES * 9 / 10);
        assertThat(cached.stderrStartingWith(AppRun.AGENT_PREFIX)).as("kmem4j's lines, %s", cached)
                .noneMatch(l -> l.contains(" WARN ") || l.contains(" ERROR "));

        List<String> kmem4jClasses = Files.readAllLines(classLog).stream()
                .filter(l -> l.matches(".* io\\.kmem4j\\.(agent|core)\\.\\S+ source: .*"))
                .collect(Collectors.toList());
        long fromCache = kmem4jClasses.stream().filter(l -> l.endsWith("source: shared objects file")).count();
        System.out.println(TestJdks.LOG_PREFIX + "JDK " + jdk.version() + ": " + fromCache + " of the "
                + kmem4jClasses.size() + " agent and allocator classes loaded came from the AOT cache");
        assertThat(kmem4jClasses).as("kmem4j's classes loaded (%s), %s", classLog, cached).hasSizeGreaterThan(20);
        if (jdk.feature() <= 26) {
            assertThat(fromCache).as("kmem4j's classes from the cache, %s", cached)
                    .isGreaterThanOrEqualTo(kmem4jClasses.size() * 8L / 10);
        }
    }

    private static AppRun echo(Jdk jdk, String name, List<String> jvmArgs) {
        return AppRun.run(jdk, name + jdk.label(), jvmArgs, AppRun.classpath(Artifacts.samplesJar()),
                "io.kmem4j.samples.Samples", RUN_TIMEOUT, "echo", "--messages", String.valueOf(MESSAGES));
    }
}
