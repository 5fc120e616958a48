package io.kmem4j.it;

import static io.kmem4j.it.JmxClient.ALLOCATOR;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.kmem4j.it.apps.AttachTargetApp;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.regex.Pattern;
import java.util.stream.Collectors;
import javax.management.ObjectName;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * Dynamic attach (issue 4, part 3): {@link AttachTargetApp} starts without the agent, allocates and
 * holds direct buffers and keeps a thread allocating and releasing; then
 * {@code java -jar kmem4j-agent.jar attach <pid>} loads the agent. Read over JMX (Attach API) and from
 * the program's own checks:
 * <ul>
 *   <li>buffers allocated after the attach are served by the slabs (their size class's
 *       {@code SlabCache} counters), the churn thread never saw a bad buffer while the attach raced
 *       it, and no interceptor failure was counted;</li>
 *   <li>buffers allocated before the attach keep their contents (through views too) and stay the
 *       JDK's: released with {@code invokeCleaner} or by GC, the JDK's direct pool gives back exactly
 *       their bytes and no kmem4j counter of their size class moves;</li>
 *   <li>no exception or stack trace in the target;</li>
 *   <li>what the JVM prints about the dynamic load: on JDK 21+ the JEP 451 warning unless the target
 *       was started with {@code -XX:+EnableDynamicAgentLoading}; with
 *       {@code -XX:-EnableDynamicAgentLoading} the load is refused and the target runs on untouched;
 *       a {@code -javaagent} start prints no such warning.</li>
 * </ul>
 */
@Timeout(value = 3, unit = TimeUnit.MINUTES)
class DynamicAttachIT {

    private static final String APP = "io.kmem4j.it.apps.AttachTargetApp";
    private static final String HELLO_APP = "io.kmem4j.it.apps.HelloApp";
    /** The size class of {@link AttachTargetApp#SIZE} with the default classes. */
    private static final ObjectName CACHE = JmxClient.objectName("kmem4j:type=SlabCache,name=kmem4j-49152");
    private static final ObjectName CHURN_CACHE = JmxClient.objectName("kmem4j:type=SlabCache,name=kmem4j-3072");
    private static final String DYNAMIC_WARNING = "WARNING: A Java agent has been loaded dynamically (";
    private static final Duration START_TIMEOUT = Duration.ofSeconds(30);
    private static final Duration STEP_TIMEOUT = Duration.ofSeconds(30);
    private static final Duration CLI_TIMEOUT = Duration.ofSeconds(60);
    /** Longer than the age of the beans' shared snapshot (200 ms): a read after it sees everything before. */
    private static final long SNAPSHOT_AGE_MILLIS = 300;
    private static final Pattern STACK_TRACE_LINE =
            Pattern.compile(".*(Exception|Error:).*|^\\s+at \\S+\\(.*\\)\\s*$|^Caused by: .*|^\\s+\\.\\.\\. \\d+ more$");
    private static final String[] CACHE_COUNTERS = {"Allocations", "Frees", "ActiveObjects"};

    @ParameterizedTest(name = "{0}")
    @MethodSource("io.kmem4j.it.TestJdks#all")
    void attachServesNewBuffersAndLeavesOldOnesToTheJdk(Jdk jdk) {
        attachScenario(jdk, List.of(), "attach-");
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("io.kmem4j.it.TestJdks#all")
    void attachToATargetStartedWithEnableDynamicAgentLoadingPrintsNoWarning(Jdk jdk) {
        assumeTrue(jdk.feature() >= 21, "the dynamic-agent warning exists from JDK 21 on (JEP 451), this is "
                + jdk.version());
        attachScenario(jdk, List.of("-XX:+EnableDynamicAgentLoading"), "attach-enabled-");
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("io.kmem4j.it.TestJdks#all")
    void attachIsRefusedWhenDynamicLoadingIsDisabledAndTheTargetRunsOn(Jdk jdk) {
        try (ForkedJvm app = ForkedJvm.builder(jdk, "attach-disabled-" + jdk.label())
                .jvmArgs("-XX:-EnableDynamicAgentLoading")
                .mainClass(AppRun.classpath(AppRun.appClasses()), APP)
                .start()) {
            app.awaitStdoutLine("attach-app: ready", START_TIMEOUT);
            ForkedJvm cli = attachCli(jdk, app);
            int exit = cli.waitForExit(CLI_TIMEOUT);
            assertThat(exit).as("exit code of the attach command\n%s", cli.describe()).isNotZero();
            assertThat(String.join("\n", cli.stderrLines())).as("the attach command's reason\n%s", cli.describe())
                    .contains("EnableDynamicAgentLoading");
            assertThat(cli.stderrLines()).as("one line, no stack trace\n%s", cli.describe())
                    .hasSize(1).noneMatch(l -> l.startsWith("\tat ") || l.contains("Exception in thread"));
            command(app, "new", "attach-app: new allocated=");
            command(app, "check", "attach-app: check ok old=16 new=16");
            try (JmxClient jmx = JmxClient.attach(app.pid(), app + " on " + jdk, CLI_TIMEOUT)) {
                assertThat(jmx.isRegistered(ALLOCATOR)).as("kmem4j beans in a target that refused the agent").isFalse();
            }
            finish(app);
            assertThat(app.stderrLines()).as("stderr of %s\n%s", app, app.describe())
                    .noneMatch(l -> l.startsWith(AppRun.AGENT_PREFIX)).noneMatch(l -> l.contains("loaded dynamically"));
            log(jdk, "-XX:-EnableDynamicAgentLoading: attach exit " + exit + ", its stderr: "
                    + cli.stderrLines().stream().filter(l -> !l.startsWith("\t")).collect(Collectors.joining(" | ")));
        }
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("io.kmem4j.it.TestJdks#all")
    void aJavaagentStartPrintsNoDynamicAgentWarning(Jdk jdk) {
        AppRun run = AppRun.run(jdk, "javaagent-hello-" + jdk.label(), List.of(AppRun.javaagent(null)),
                AppRun.classpath(AppRun.appClasses()), HELLO_APP, START_TIMEOUT);
        assertThat(run.exit()).as("exit code of %s\n%s", run, run.description()).isZero();
        assertThat(run.stderr()).as("stderr of %s\n%s", run, run.description())
                .noneMatch(l -> l.startsWith("WARNING:")).noneMatch(l -> l.contains("EnableDynamicAgentLoading"))
                .anyMatch(l -> l.startsWith("[kmem4j] INFO ") && (l.endsWith("(premain)") || l.contains("(premain, ")));
    }

    private void attachScenario(Jdk jdk, List<String> flags, String name) {
        try (ForkedJvm app = ForkedJvm.builder(jdk, name + "target-" + jdk.label())
                .jvmArgs(flags)
                .mainClass(AppRun.classpath(AppRun.appClasses()), APP)
                .start()) {
            app.awaitStdoutLine("attach-app: ready", START_TIMEOUT);
            try (JmxClient jmx = JmxClient.attach(app.pid(), app + " on " + jdk, CLI_TIMEOUT)) {
                assertThat(jmx.isRegistered(ALLOCATOR)).as("kmem4j beans before the attach").isFalse();

                ForkedJvm cli = attachCli(jdk, app);
                assertThat(cli.waitForExit(CLI_TIMEOUT)).as("exit code of the attach command\n%s", cli.describe()).isZero();
                assertThat(cli.stdoutLines()).as(cli.describe()).anyMatch(l -> l.startsWith("kmem4j: attached to pid "
                        + app.pid() + ";"));
                assertThat(cli.stderrLines()).as("stderr of the attach command\n%s", cli.describe()).isEmpty();
                app.awaitLine(ForkedJvm.Channel.STDERR, "the agent's start line", l -> l.startsWith("[kmem4j] INFO ")
                        && (l.endsWith("(attached)") || l.contains("(attached, ")), STEP_TIMEOUT);
                jmx.awaitRegistered(CACHE, STEP_TIMEOUT);

                command(app, "check", "attach-app: check ok old=16 new=0");
                sleepPastSnapshotAge();
                assertThat(jmx.readLongs(CACHE, CACHE_COUNTERS)).as("the old buffers' size class right after the"
                        + " attach: the old buffers are the JDK's").containsEntry("Allocations", 0L);

                command(app, "new", "attach-app: new allocated=16");
                awaitCounters(jmx, CACHE, Map.of("Allocations", 16L, "Frees", 0L, "ActiveObjects", 16L),
                        "the 16 buffers allocated after the attach, served by the slabs");
                command(app, "check", "attach-app: check ok old=16 new=16");
                String churn = command(app, "stop-churn", "attach-app: stop-churn ops=");
                sleepPastSnapshotAge();
                Map<String, Long> churned = jmx.readLongs(CHURN_CACHE, CACHE_COUNTERS);
                assertThat(churned.get("Allocations")).as("churn buffers served after the attach: %s", churned)
                        .isPositive();
                Map<String, Long> before = jmx.readLongs(CACHE, CACHE_COUNTERS);

                String released = command(app, "release-old", "attach-app: release-old ");
                Map<String, String> r = KeyValues.parse(released);
                assertThat(r.get("poolBytesFreed")).as("the JDK's direct pool gave back exactly the old buffers'"
                        + " bytes: %s\n%s", released, app.describe()).isEqualTo(r.get("expected"));
                sleepPastSnapshotAge();
                assertThat(jmx.readLongs(CACHE, CACHE_COUNTERS)).as("kmem4j counters of the old buffers' size class"
                        + " after the old buffers were released (8 explicitly, 8 by GC)").isEqualTo(before);

                command(app, "release-new", "attach-app: release-new released=16");
                awaitCounters(jmx, CACHE, Map.of("Allocations", 16L, "Frees", 16L, "ActiveObjects", 0L),
                        "the 16 new buffers released with invokeCleaner");
                Map<String, Long> allocator = jmx.readLongs(ALLOCATOR, "Allocations", "Frees", "ExplicitFrees",
                        "GcFrees", "Fallbacks", "DoubleFrees", "InterceptorFailures");
                assertThat(allocator).as("allocator after the attach").containsEntry("DoubleFrees", 0L)
                        .containsEntry("InterceptorFailures", 0L);
                log(jdk, name + "flags " + flags + ": " + churn.substring("attach-app: ".length()) + "; "
                        + released.substring("attach-app: ".length()) + "; allocator " + allocator
                        + "; dynamic-agent warning lines: " + dynamicWarning(app));
            }
            finish(app);
            List<String> traces = app.stderrLines().stream().filter(l -> STACK_TRACE_LINE.matcher(l).matches())
                    .collect(Collectors.toList());
            assertThat(traces).as("exception / stack trace lines on stderr of %s\n%s", app, app.describe()).isEmpty();
            boolean warned = jdk.feature() >= 21 && !flags.contains("-XX:+EnableDynamicAgentLoading");
            if (warned) {
                assertThat(app.stderrLines()).as("JEP 451 warning on stderr of %s\n%s", app, app.describe())
                        .contains(DYNAMIC_WARNING + Artifacts.agentJar() + ")");
            } else {
                assertThat(app.stderrLines()).as("no dynamic-agent warning on stderr of %s\n%s", app, app.describe())
                        .noneMatch(l -> l.contains("loaded dynamically") || l.contains("EnableDynamicAgentLoading"));
            }
        }
    }

    private static ForkedJvm attachCli(Jdk jdk, ForkedJvm app) {
        return ForkedJvm.builder(jdk, "attach-cli-" + jdk.label())
                .jar(Artifacts.agentJar())
                .programArgs("attach", String.valueOf(app.pid()))
                .start();
    }

    /**
     * Sends a command to the program and waits for its answer: the next stdout line starting with
     * {@code answer} (earlier answers to the same command do not count).
     */
    private static String command(ForkedJvm app, String command, String answer) {
        long earlier = app.stdoutLines().stream().filter(l -> l.startsWith(answer)).count();
        long[] seen = {0};
        app.writeStdin(command + "\n");
        String line = app.awaitLine(ForkedJvm.Channel.STDOUT, "'" + answer + "...' after '" + command + "'",
                l -> (l.startsWith(answer) && ++seen[0] > earlier) || l.startsWith("attach-app: FAIL"), STEP_TIMEOUT);
        assertThat(line).as("answer to '%s'\n%s", command, app.describe()).startsWith(answer);
        return line;
    }

    private static void awaitCounters(JmxClient jmx, ObjectName bean, Map<String, Long> expected, String what) {
        await(what).atMost(STEP_TIMEOUT).pollInterval(Duration.ofMillis(100)).pollInSameThread()
                .untilAsserted(() -> assertThat(jmx.readLongs(bean, CACHE_COUNTERS)).as(what)
                        .containsAllEntriesOf(expected));
    }

    private static void finish(ForkedJvm app) {
        app.closeStdin();
        assertThat(app.waitForExit(STEP_TIMEOUT)).as("exit code of %s\n%s", app, app.describe()).isZero();
        assertThat(app.stdoutLines()).as("stdout of %s", app).contains("attach-app: exit")
                .noneMatch(l -> l.contains("FAIL"));
    }

    private static String dynamicWarning(ForkedJvm app) {
        List<String> lines = new ArrayList<>();
        for (String l : app.stderrLines()) {
            if (l.startsWith("WARNING:") && !l.contains("sun.misc.Unsafe") && !l.contains("Cleaners")) {
                lines.add(l);
            }
        }
        return lines.isEmpty() ? "none" : String.join(" | ", lines);
    }

    private static void sleepPastSnapshotAge() {
        try {
            Thread.sleep(SNAPSHOT_AGE_MILLIS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(e);
        }
    }

    private static void log(Jdk jdk, String text) {
        System.out.println(TestJdks.LOG_PREFIX + "attach JDK " + jdk.version() + ": " + text);
    }
}
