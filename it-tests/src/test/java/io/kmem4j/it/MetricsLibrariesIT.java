package io.kmem4j.it;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.File;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * The {@code kmem4j} pool in the platform's buffer pools (issue 16, part 1), as three metrics libraries
 * see it with no configuration, in one forked JVM per JDK ({@link io.kmem4j.it.apps.MetricsLibrariesApp}
 * under the agent): Micrometer's {@code JvmMemoryMetrics} ({@code jvm.buffer.count|total.capacity|memory.used{id="kmem4j"}}),
 * Prometheus client_java's {@code JvmBufferPoolMetrics} scraped as text
 * ({@code jvm_buffer_pool_used_buffers|capacity_bytes|used_bytes{pool="kmem4j"}}) and OpenTelemetry's
 * runtime telemetry through an in-memory reader ({@code jvm.buffer.count|memory.limit|memory.used{jvm.buffer.pool.name="kmem4j"}}).
 * Each shows exactly the {@code kmem4j:type=Allocator} bean's {@code LiveBuffers}, {@code BytesInUse} and
 * {@code BytesReserved} of the same moment; the JDK's {@code direct} pool counts kmem4j's chunks
 * ({@code BytesReserved}) among its own; remote clients ({@code getPlatformMXBeans(connection, ..)}) get
 * the pool too. Smoke set: every JDK of the matrix.
 */
@Timeout(value = 2, unit = TimeUnit.MINUTES)
class MetricsLibrariesIT {

    private static final String APP = "io.kmem4j.it.apps.MetricsLibrariesApp";
    private static final Duration RUN_TIMEOUT = Duration.ofSeconds(90);
    /** What the app holds: 100 x 1000 B and 20 x 30000 B. */
    private static final long HELD_BUFFERS = 120;
    private static final long HELD_BYTES = 100 * 1000 + 20 * 30000;

    /** The test class path's jars of these groups: the libraries and what they need, nothing of kmem4j. */
    static String libraries(String... groupPaths) {
        List<String> jars = new ArrayList<>();
        for (String entry : System.getProperty("java.class.path").split(File.pathSeparator)) {
            for (String group : groupPaths) {
                if (entry.replace(File.separatorChar, '/').contains(group)) {
                    jars.add(entry);
                    break;
                }
            }
        }
        assertThat(jars).as("jars of %s on the test class path", List.of(groupPaths)).isNotEmpty();
        return String.join(File.pathSeparator, jars);
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("io.kmem4j.it.TestJdks#all")
    void everyLibraryShowsTheKmem4jPoolWithTheAllocatorsNumbers(Jdk jdk) {
        String classpath = AppRun.classpath(AppRun.appClasses()) + File.pathSeparator
                + libraries("/io/micrometer/", "/org/hdrhistogram/", "/org/latencyutils/", "/io/prometheus/", "/io/opentelemetry/");
        AppRun run = AppRun.run(jdk, "metrics-libraries-" + jdk.label(), List.of(AppRun.javaagent("")), classpath, APP,
                RUN_TIMEOUT);

        assertThat(run.exit()).as("exit code of %s\n%s", run, run.description()).isZero();
        assertThat(run.requireLine("pools: ")).contains("direct", "mapped", "kmem4j");
        assertThat(run.requireLine("pools over the MBean server: ")).contains("direct", "kmem4j");
        Map<String, String> allocator = KeyValues.parse(run.requireLine("allocator: "));
        assertThat(Long.parseLong(allocator.get("count"))).as("LiveBuffers").isGreaterThanOrEqualTo(HELD_BUFFERS);
        assertThat(Long.parseLong(allocator.get("capacity"))).as("BytesInUse").isGreaterThanOrEqualTo(HELD_BYTES);
        assertThat(Long.parseLong(allocator.get("used"))).as("BytesReserved")
                .isGreaterThanOrEqualTo(Long.parseLong(allocator.get("capacity")));
        for (String library : List.of("micrometer: ", "prometheus: ", "otel: ")) {
            assertThat(KeyValues.parse(run.requireLine(library))).as("%s on JDK %s", library, jdk.version())
                    .isEqualTo(allocator);
        }
        Map<String, String> direct = KeyValues.parse(run.requireLine("direct: "));
        assertThat(Long.parseLong(direct.get("used"))).as("the JDK's direct pool counts kmem4j's chunks")
                .isGreaterThanOrEqualTo(Long.parseLong(allocator.get("used")));
        assertThat(Long.parseLong(direct.get("count"))).as("each chunk one JDK 'buffer'").isPositive();
        assertThat(run.stderrStartingWith(AppRun.AGENT_PREFIX)).as("the agent's log")
                .allSatisfy(l -> assertThat(l).doesNotContain(" WARN ", " ERROR "));
    }
}
