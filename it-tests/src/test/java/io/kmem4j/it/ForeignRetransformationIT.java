package io.kmem4j.it;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.jar.Attributes;
import java.util.jar.JarEntry;
import java.util.jar.JarOutputStream;
import java.util.jar.Manifest;
import java.util.stream.Stream;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * kmem4j beside someone else's bytecode agent (issue 16, part 2): {@link io.kmem4j.it.apps.RetransformingAgent},
 * a small ByteBuddy agent that retransforms {@code java.nio.ByteBuffer} and {@code java.nio.DirectByteBuffer}
 * with advice of its own, runs before and after kmem4j on the command line, and retransforms those
 * classes and the JDK cleaner's once more while {@link io.kmem4j.it.apps.RetransformedApp} runs. Before
 * and after that retransformation, in both orders: every {@code allocateDirect} is kmem4j's (the
 * Allocator bean counts them) and every {@code invokeCleaner} frees it (explicit frees: the bridge, the
 * {@code allocateDirect} advice and, with the owned lifecycle, the cleaner's advice are still in place:
 * kmem4j's transformers stay registered and rewrite the classes again), the other agent's advice counts
 * every {@code duplicate} and {@code slice}, contents are intact, neither agent logs a WARN or an error.
 * (Its {@code allocateDirect} count is 0 when it comes first: kmem4j's advice, applied after it, skips the
 * method's body, its advice included; 20 when kmem4j comes first. Not asserted: either is right.)
 */
@Timeout(value = 3, unit = TimeUnit.MINUTES)
class ForeignRetransformationIT {

    private static final String APP = "io.kmem4j.it.apps.RetransformedApp";
    private static final Duration RUN_TIMEOUT = Duration.ofSeconds(90);
    /** Buffers per phase of the app. */
    private static final String N = "20";

    /** {@code target/retransforming-agent/retransforming-agent.jar}: the agent's classes and its manifest. */
    static synchronized Path agentJar() {
        Path jar = Path.of("target", "retransforming-agent", "retransforming-agent.jar").toAbsolutePath();
        Path classes = AppRun.appClasses();
        Manifest manifest = new Manifest();
        Attributes main = manifest.getMainAttributes();
        main.put(Attributes.Name.MANIFEST_VERSION, "1.0");
        main.putValue("Premain-Class", "io.kmem4j.it.apps.RetransformingAgent");
        main.putValue("Agent-Class", "io.kmem4j.it.apps.RetransformingAgent");
        main.putValue("Can-Retransform-Classes", "true");
        try {
            Files.createDirectories(jar.getParent());
            try (OutputStream out = Files.newOutputStream(jar); JarOutputStream jos = new JarOutputStream(out, manifest);
                 Stream<Path> files = Files.list(classes.resolve("io/kmem4j/it/apps"))) {
                for (Path f : (Iterable<Path>) files.filter(p -> p.getFileName().toString().startsWith("RetransformingAgent"))::iterator) {
                    jos.putNextEntry(new JarEntry("io/kmem4j/it/apps/" + f.getFileName()));
                    jos.write(Files.readAllBytes(f));
                    jos.closeEntry();
                }
            }
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        return jar;
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("io.kmem4j.it.TestJdks#full")
    void otherAgentFirst(Jdk jdk) {
        check(jdk, "retransformed-other-first", List.of("-javaagent:" + agentJar(), AppRun.javaagent("")));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("io.kmem4j.it.TestJdks#full")
    void kmem4jFirst(Jdk jdk) {
        check(jdk, "retransformed-kmem4j-first", List.of(AppRun.javaagent(""), "-javaagent:" + agentJar()));
    }

    private static void check(Jdk jdk, String name, List<String> agents) {
        String classpath = AppRun.classpath(AppRun.appClasses()) + java.io.File.pathSeparator
                + MetricsLibrariesIT.libraries("/net/bytebuddy/byte-buddy/");
        AppRun run = AppRun.run(jdk, name + "-" + jdk.label(), agents, classpath, APP, RUN_TIMEOUT);

        assertThat(run.exit()).as("exit code of %s\n%s", run, run.description()).isZero();
        assertThat(run.requireLine("retransforming-agent: installed")).isNotNull();
        assertThat(run.requireLine("retransformed again")).isNotNull();
        assertThat(run.requireLine("contents: ")).isEqualTo("contents: ok");
        for (String phase : List.of("before", "after")) {
            assertThat(KeyValues.parse(run.requireLine(phase + ": allocations="))).as("%s, %s", phase, run)
                    .isEqualTo(Map.of("allocations", N, "explicitFrees", N));
            Map<String, String> other = KeyValues.parse(run.requireLine(phase + ": agent "));
            assertThat(other).as("the other agent's advice, %s, %s", phase, run)
                    .containsEntry("duplicate", N).containsEntry("slice", N);
        }
        // the start line only: the owned lifecycle, switched on at the first allocation, says nothing when its
        // rewrite of the JDK's cleaner takes (a WARN "tracked buffers keep the JDK's cleaner list" when not)
        assertThat(run.stderrStartingWith(AppRun.AGENT_PREFIX)).as("kmem4j's log").hasSize(1)
                .allSatisfy(l -> assertThat(l).contains(" INFO ").contains("serving ByteBuffer.allocateDirect"));
        // JDK 24+: the app's own invokeCleaner gets the JDK's four sun.misc.Unsafe lines (JEP 498), as without agents
        assertThat(run.stderr()).as("stderr of %s", run)
                .filteredOn(l -> !(l.startsWith("WARNING: ") && (l.contains("sun.misc.Unsafe") || l.contains("Please consider reporting"))))
                .noneMatch(l -> l.contains("Exception") || l.contains("Error") || l.contains("WARN"));
    }
}
