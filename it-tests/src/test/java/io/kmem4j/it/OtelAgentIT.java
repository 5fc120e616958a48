package io.kmem4j.it;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * kmem4j beside the OpenTelemetry Java agent (issue 16, part 2): the echo sample under the OpenTelemetry
 * agent 2.31.1 (metrics to its logging exporter, traces and logs off: no network; its runtime metrics
 * with the experimental buffer pools; {@code docs/otel-jmx-metrics.yaml} as its JMX rules), alone, with
 * kmem4j before it and after it on the command line, and with kmem4j attached to it while it runs. In
 * every kmem4j run: the same echoed bytes as alone, kmem4j serves (its summary counts allocations), its
 * log has one INFO line and no WARN, the OpenTelemetry agent logs no WARN or error it does not log alone,
 * and it exports every metric of kmem4j's JMX rules. With kmem4j first, its runtime metrics show the
 * {@code kmem4j} pool with the Allocator bean's figures ({@code jvm.buffer.memory.used} = {@code kmem4j.bytes_reserved},
 * {@code jvm.buffer.memory.limit} = {@code kmem4j.bytes_in_use}, {@code jvm.buffer.count} = {@code kmem4j.live_buffers},
 * in one collection); with kmem4j second or attached they do not: that agent reads the platform's list
 * of buffer pools once, at its own start (README).
 */
@Timeout(value = 6, unit = TimeUnit.MINUTES)
class OtelAgentIT {

    private static final Path OTEL_AGENT = Path.of("target", "otel", "opentelemetry-javaagent.jar").toAbsolutePath();
    private static final Path RULES = Path.of("..", "docs", "otel-jmx-metrics.yaml").toAbsolutePath().normalize();
    private static final Duration STEP = Duration.ofSeconds(90);
    private static final String OTEL_STARTED = "opentelemetry-javaagent - version: ";
    /** One point of the logging exporter's line: epochNanos, attributes, value. */
    private static final Pattern POINT =
            Pattern.compile("PointData\\{startEpochNanos=\\d+, epochNanos=(\\d+), attributes=\\{([^}]*)\\}, value=(-?[0-9.E]+)");
    private static final Pattern METRIC_NAME = Pattern.compile("instrumentationScopeInfo=.*?\\}, name=([^,]+), description=");
    private static final Pattern RULE = Pattern.compile("^\\s+(prefix|metric): (\\S+)\\s*$");
    private static final String KMEM4J_POOL = "jvm.buffer.pool.name=\"kmem4j\"";

    private static List<String> otel() {
        assertThat(OTEL_AGENT).as("the OpenTelemetry agent (copied by the it-tests pom)").exists();
        return List.of("-javaagent:" + OTEL_AGENT, "-Dotel.traces.exporter=none", "-Dotel.logs.exporter=none",
                "-Dotel.metrics.exporter=logging", "-Dotel.metric.export.interval=1000",
                "-Dotel.instrumentation.runtime-telemetry.emit-experimental-metrics=true", "-Dotel.jmx.config=" + RULES);
    }

    /** The metric names of the JMX rules file: each {@code prefix} followed by its {@code metric}s. */
    static Set<String> ruleMetrics() throws Exception {
        Set<String> names = new LinkedHashSet<>();
        String prefix = "";
        for (String line : Files.readAllLines(RULES)) {
            Matcher m = RULE.matcher(line);
            if (m.matches()) {
                if (m.group(1).equals("prefix")) {
                    prefix = m.group(2);
                } else {
                    names.add(prefix + m.group(2));
                }
            }
        }
        return names;
    }

    /** The last metric of kmem4j's JMX rules for the Allocator and SlabCache beans: once exported, all are. */
    private static final String ALL_RULES = "name=kmem4j.cache.address_order_ratio";

    /** One run: the echo under the given JVM arguments, held open until the exporter showed each of {@code awaited}. */
    private record Run(ForkedJvm jvm, List<String> stdout, List<String> stderr) {
    }

    private static Run echo(Jdk jdk, String name, List<String> jvmArgs, List<String> awaited, Consumer<ForkedJvm> whileRunning,
                            String... echoArgs) {
        List<String> args = new ArrayList<>(List.of("echo", "--messages", "3000", "--hold"));
        args.addAll(List.of(echoArgs));
        try (ForkedJvm jvm = ForkedJvm.builder(jdk, name + "-" + jdk.label()).jvmArgs(jvmArgs).jar(Artifacts.samplesJar())
                .programArgs(args).start()) {
            jvm.awaitLine(ForkedJvm.Channel.STDERR, "the OpenTelemetry agent started", l -> l.contains(OTEL_STARTED), STEP);
            whileRunning.accept(jvm);
            jvm.awaitStdoutLine("echo: messages=", STEP);
            for (String a : awaited) {
                jvm.awaitLine(ForkedJvm.Channel.STDERR, "an export with " + a, l -> l.contains(a), STEP);
            }
            // two more collections once the workload is over: the last whole one reads figures that stand
            // still, so its views of them can agree (on a busy box every collection during the run read
            // the pool and the Allocator bean on either side of a change)
            long collections = collections(jvm);
            org.awaitility.Awaitility.await("two more OpenTelemetry collections of " + jvm).atMost(STEP)
                    .pollInterval(Duration.ofMillis(100)).until(() -> collections(jvm) >= collections + 2);
            jvm.closeStdin();
            assertThat(jvm.waitForExit(STEP)).as("exit code of %s\n%s", jvm, jvm.describe()).isZero();
            return new Run(jvm, jvm.stdoutLines(), jvm.stderrLines());
        }
    }

    /** Collections the logging exporter has printed so far (one {@code jvm.buffer.memory.used} line each). */
    private static long collections(ForkedJvm jvm) {
        return jvm.stderrLines().stream().filter(l -> l.contains("name=jvm.buffer.memory.used")).count();
    }

    private static String echoed(Run run) {
        return run.stdout().stream().filter(l -> l.startsWith("echo: messages=")).findFirst().orElseThrow();
    }

    private static void attach(Jdk jdk, ForkedJvm target) {
        // after the OpenTelemetry agent's start-up (its first export): it has read the platform's pools
        target.awaitLine(ForkedJvm.Channel.STDERR, "a first export", l -> l.contains("LoggingMetricExporter - metric: "), STEP);
        AgentCli cli = AgentCli.run(jdk, "otel-attach-cli", "attach", String.valueOf(target.pid()), "summary=true");
        assertThat(cli.exit()).as("attach\n%s", cli.description()).isZero();
        System.out.println(TestJdks.LOG_PREFIX + "attach: " + String.join(" ", cli.stdout()));
    }

    /** The OpenTelemetry agent's WARN and error lines, without their time stamp and thread. */
    private static Set<String> otelProblems(Run run) {
        return run.stderr().stream()
                .filter(l -> l.contains(" WARN ") || l.contains(" ERROR ") || l.contains("SEVERE") || l.contains("Exception"))
                .filter(l -> !l.startsWith(AppRun.AGENT_PREFIX))
                .map(l -> l.replaceFirst("^\\[otel\\.javaagent [^]]*\\] \\[[^]]*\\] ", ""))
                .collect(Collectors.toCollection(LinkedHashSet::new));
    }

    /** Per metric name: per collection time, per attribute set, the value (the logging exporter's lines). */
    static Map<String, Map<String, Map<String, String>>> exported(List<String> stderr) {
        Map<String, Map<String, Map<String, String>>> out = new LinkedHashMap<>();
        for (String line : stderr) {
            if (!line.contains("LoggingMetricExporter - metric: ")) {
                continue;
            }
            Matcher name = METRIC_NAME.matcher(line);
            if (!name.find()) {
                continue;
            }
            Matcher p = POINT.matcher(line);
            while (p.find()) {
                out.computeIfAbsent(name.group(1), k -> new LinkedHashMap<>())
                        .computeIfAbsent(p.group(1), k -> new LinkedHashMap<>()).put(p.group(2), p.group(3));
            }
        }
        return out;
    }

    private static void checkBeside(Run run, Run alone, String what) throws Exception {
        if (what.contains("attached")) {
            // rounds for a duration: their count varies; every byte verified
            assertThat(KeyValues.parse(echoed(run))).as("the echo, %s", what)
                    .containsEntry("verified", "true").containsEntry("mismatches", "0");
        } else {
            assertThat(echoed(run)).as("the echoed bytes, %s", what).isEqualTo(echoed(alone));
        }
        assertThat(Long.parseLong(new AppRun(what, 0, run.stdout(), run.stderr(), 0, run.jvm().describe())
                .summaryCounters().get("allocations"))).as("kmem4j served, %s", what).isPositive();
        List<String> kmem4j = run.stderr().stream().filter(l -> l.startsWith(AppRun.AGENT_PREFIX)
                && !l.startsWith("[kmem4j] summary:")).toList();
        assertThat(kmem4j).as("kmem4j's log, %s", what).hasSize(1).allSatisfy(l -> assertThat(l).contains(" INFO "));
        assertThat(otelProblems(run)).as("the OpenTelemetry agent's WARN/ERROR lines, %s, beyond those it logs alone", what)
                .isSubsetOf(otelProblems(alone));
        assertThat(exported(run.stderr()).keySet()).as("kmem4j's JMX rules exported, %s", what)
                .containsAll(ruleMetrics().stream().filter(n -> !n.startsWith("kmem4j.pools.")).toList());
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("io.kmem4j.it.TestJdks#full")
    void bothOrdersAndAnAttach(Jdk jdk) throws Exception {
        Run alone = echo(jdk, "otel-alone", otel(), List.of("name=jvm.buffer.memory.used"), jvm -> { });
        assertThat(exported(alone.stderr()).keySet()).as("nothing of kmem4j without it").noneMatch(n -> n.startsWith("kmem4j."));

        List<String> first = new ArrayList<>(List.of(AppRun.javaagent("summary=true")));
        first.addAll(otel());
        Run kmem4jFirst = echo(jdk, "otel-kmem4j-first", first, List.of(KMEM4J_POOL, ALL_RULES), jvm -> { });
        checkBeside(kmem4jFirst, alone, "kmem4j first");
        Map<String, Map<String, Map<String, String>>> e = exported(kmem4jFirst.stderr());
        boolean agreed = false;
        for (String at : e.get("jvm.buffer.memory.used").keySet()) {
            String used = e.get("jvm.buffer.memory.used").get(at).get(KMEM4J_POOL);
            String limit = e.get("jvm.buffer.memory.limit").getOrDefault(at, Map.of()).get(KMEM4J_POOL);
            String count = e.get("jvm.buffer.count").getOrDefault(at, Map.of()).get(KMEM4J_POOL);
            String reserved = e.get("kmem4j.bytes_reserved").getOrDefault(at, Map.of()).get("");
            String inUse = e.get("kmem4j.bytes_in_use").getOrDefault(at, Map.of()).get("");
            String live = e.get("kmem4j.live_buffers").getOrDefault(at, Map.of()).get("");
            if (used != null && used.equals(reserved) && limit != null && limit.equals(inUse) && count != null
                    && count.equals(live) && Long.parseLong(used) > 0) {
                System.out.println(TestJdks.LOG_PREFIX + "JDK " + jdk.version() + ", OpenTelemetry agent: jvm.buffer.memory.used/limit/count{kmem4j}="
                        + used + "/" + limit + "/" + count + ", kmem4j.bytes_reserved/bytes_in_use/live_buffers=" + reserved
                        + "/" + inUse + "/" + live);
                agreed = true;
            }
        }
        assertThat(agreed).as("a collection where the kmem4j pool shows the Allocator's figures").isTrue();

        List<String> second = new ArrayList<>(otel());
        second.add(AppRun.javaagent("summary=true"));
        Run otelFirst = echo(jdk, "otel-otel-first", second, List.of(ALL_RULES), jvm -> { });
        checkBeside(otelFirst, alone, "kmem4j second");
        assertThat(otelFirst.stderr()).as("the runtime metrics took the list before kmem4j started")
                .noneMatch(l -> l.contains(KMEM4J_POOL));

        List<String> attachTarget = new ArrayList<>(List.of("-XX:+EnableDynamicAgentLoading"));
        attachTarget.addAll(otel());
        Run attached = echo(jdk, "otel-attach", attachTarget, List.of(ALL_RULES), target -> attach(jdk, target),
                "--duration", "8");
        checkBeside(attached, alone, "kmem4j attached");
        assertThat(attached.stderr()).as("the runtime metrics took the list before kmem4j was attached")
                .noneMatch(l -> l.contains(KMEM4J_POOL))
                .noneMatch(l -> l.startsWith("WARNING: A Java agent has been loaded dynamically"));
    }
}
