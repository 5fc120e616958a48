package io.kmem4j.it;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * A recording of a sample run under the agent, read back with the JDK's own {@code jfr print},
 * contains kmem4j's events (category {@code kmem4j}).
 */
@Timeout(value = 2, unit = TimeUnit.MINUTES)
class JfrIT {
    @ParameterizedTest(name = "{0}")
    @MethodSource("io.kmem4j.it.TestJdks#all")
    void jfrPrintShowsTheAllocatorsEvents(final Jdk jdk) throws IOException, InterruptedException {
        final Path dir = Files.createDirectories(Path.of("target", "jfr-it"));
        final Path recording = dir.resolve("echo-" + jdk.label() + ".jfr").toAbsolutePath();
        Files.deleteIfExists(recording);
        try (ForkedJvm jvm = ForkedJvm.builder(jdk, "jfr-echo-" + jdk.label())
                .jvmArgs("-XX:StartFlightRecording:filename=" + recording + ",+io.kmem4j.Fallback#enabled=true",
                    AppRun.javaagent(""))
                .jar(Artifacts.samplesJar())
                // payloads up to 128 KiB: some are above the largest size class once the allocator is built
                // (requests of such sizes made before the first served one build nothing and raise no event)
                .programArgs("echo", "--messages", "2000", "--connections", "2", "--max-size", "131072")
                .start()) {
            assertThat(jvm.waitForExit(Duration.ofSeconds(60))).as("exit code\n%s", jvm.describe()).isZero();
        }
        final Process print = new ProcessBuilder(jdk.home().resolve("bin").resolve("jfr").toString(), "print",
            "--categories", "kmem4j", recording.toString()).redirectErrorStream(true).start();
        final String out = new String(print.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertThat(print.waitFor(60, TimeUnit.SECONDS)).isTrue();
        assertThat(print.exitValue()).as("jfr print exit code:\n%s", out).isZero();
        System.out.println(TestJdks.LOG_PREFIX + "jfr print --categories kmem4j on JDK " + jdk.version() + ": "
            + List.of("io.kmem4j.ChunkGrow", "io.kmem4j.Fallback").stream()
                .map(e -> e + " events=" + (out.split(java.util.regex.Pattern.quote(e + " {"), -1).length - 1)).toList());
        assertThat(out).contains("io.kmem4j.ChunkGrow {").contains("io.kmem4j.Fallback {")
            .contains("reason = \"size outside the served range\"");
    }
}
