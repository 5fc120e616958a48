package io.kmem4j.it;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.function.Predicate;
import java.util.regex.Pattern;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * The agent must be invisible to ordinary programs (the test applications in
 * {@code io.kmem4j.it.apps}, which never mention kmem4j): the same stdout with and without it, on
 * its first and on its last {@code allocateDirect} (C14), under a child-first class loader, next to
 * the application's own SLF4J + Logback (C15), and when it cannot or must not install (unsupported
 * JDK, invalid setting). Every forked JVM is bounded by {@link #RUN_TIMEOUT}.
 */
@Timeout(value = 3, unit = TimeUnit.MINUTES)
class AgentSafetyIT {

    /** A run of one test application; they take a second or two. */
    private static final Duration RUN_TIMEOUT = Duration.ofSeconds(30);

    private static final String DIRECT_APP = "io.kmem4j.it.apps.DirectApp";
    private static final String CHILD_FIRST_APP = "io.kmem4j.it.apps.ChildFirstApp";
    private static final String OWN_LOGGING_APP = "io.kmem4j.it.apps.OwnLoggingApp";
    private static final String LIBRARIES_APP = "io.kmem4j.it.apps.ParentFirstLibrariesApp";

    /** The application's own Logback configuration (written next to the test classes, first on its class path). */
    static final String APP_LOGBACK_XML = """
            <configuration>
              <appender name="OUT" class="ch.qos.logback.core.ConsoleAppender">
                <target>System.out</target>
                <encoder>
                  <pattern>APP %level %logger{0} - %msg%n</pattern>
                </encoder>
              </appender>
              <root level="INFO">
                <appender-ref ref="OUT" />
              </root>
            </configuration>
            """;

    /** Text that must never appear on stderr of a run with the agent (nor without it). */
    private static final Pattern TROUBLE = Pattern.compile(
            ".*(Exception|Error\\b|Error:|Throwable|StackOverflowError|NoClassDefFoundError|ClassCircularityError"
                    + "|LinkageError|VerifyError).*|^\\s+at \\S+\\(.*\\)\\s*$|^Caused by: .*|^\\s+\\.\\.\\. \\d+ more$");

    /** stdout of DirectApp without the agent, per JDK home (computed once per JDK). */
    private static final Map<Path, AppRun> DIRECT_BASELINE = new ConcurrentHashMap<>();

    // ---------------------------------------------------------------- DirectApp (C14)

    @ParameterizedTest(name = "{0}")
    @MethodSource("io.kmem4j.it.TestJdks#full")
    void directAppPrintsTheSameWithAndWithoutTheAgent(Jdk jdk) {
        AppRun plain = directBaseline(jdk);
        AppRun agent = AppRun.run(jdk, "direct-agent-" + jdk.label(), List.of(AppRun.javaagent(null)),
                directClasspath(), DIRECT_APP, RUN_TIMEOUT);

        assertThat(agent.exit()).as("exit code of %s\n%s", agent, agent.description()).isZero();
        assertThat(agent.stdout()).as("stdout of DirectApp with the agent vs. without (%s)\n%s", plain, agent.description())
                .containsExactlyElementsOf(plain.stdout());
        assertNoTrouble(agent);
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("io.kmem4j.it.TestJdks#full")
    void directAppWithAgentLogsOneInfoLineAndASummary(Jdk jdk) {
        AppRun plain = directBaseline(jdk);
        AppRun agent = AppRun.run(jdk, "direct-summary-" + jdk.label(), List.of(AppRun.javaagent("summary=true")),
                directClasspath(), DIRECT_APP, RUN_TIMEOUT);

        assertThat(agent.exit()).as("exit code of %s\n%s", agent, agent.description()).isZero();
        assertThat(agent.stdout()).as("stdout with the agent (summary=true) vs. without\n%s", agent.description())
                .containsExactlyElementsOf(plain.stdout());
        assertThat(agent.stderrStartingWith("[kmem4j] INFO"))
                .as("INFO lines of the agent on stderr of %s\n%s", agent, agent.description()).hasSize(1);
        assertThat(agent.stderrStartingWith("[kmem4j] summary:"))
                .as("summary lines on stderr of %s\n%s", agent, agent.description()).hasSizeGreaterThanOrEqualTo(3);
        Map<String, String> summary = agent.summaryCounters();
        System.out.println(TestJdks.LOG_PREFIX + "DirectApp summary on JDK " + jdk.version() + ": " + summary);
        assertThat(Long.parseLong(summary.get("allocations")))
                .as("allocations in the summary of %s: %s", agent, summary).isPositive();
        assertNoTrouble(agent);
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("io.kmem4j.it.TestJdks#full")
    void directAppWithAgentPrintsNoJvmWarningsOnJdk24Plus(Jdk jdk) {
        assumeTrue(jdk.feature() >= 24, "JVM WARNING lines about Unsafe / agents are a JDK 24+ matter; " + jdk);
        AppRun plain = directBaseline(jdk);
        assertThat(plain.stderrStartingWith("WARNING:")).as("WARNING lines without the agent (the app uses no Unsafe)")
                .isEmpty();
        AppRun agent = AppRun.run(jdk, "direct-warnings-" + jdk.label(), List.of(AppRun.javaagent(null)),
                directClasspath(), DIRECT_APP, RUN_TIMEOUT);

        assertThat(agent.exit()).as("exit code of %s\n%s", agent, agent.description()).isZero();
        assertThat(agent.stderrStartingWith("WARNING:"))
                .as("JVM 'WARNING:' lines on stderr of %s\n%s", agent, agent.description()).isEmpty();
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("io.kmem4j.it.TestJdks#full")
    void directAppOnAnUnsupportedJdkRunsOnTheJdkAllocator(Jdk jdk) {
        AppRun plain = directBaseline(jdk);
        AppRun agent = AppRun.run(jdk, "direct-unsupported-" + jdk.label(),
                List.of("-Dkmem4j.simulateUnsupportedJdk=true", AppRun.javaagent(null)),
                directClasspath(), DIRECT_APP, RUN_TIMEOUT);

        assertThat(agent.exit()).as("exit code of %s\n%s", agent, agent.description()).isZero();
        assertThat(agent.stdout()).as("stdout on a (simulated) unsupported JDK vs. without the agent\n%s",
                agent.description()).containsExactlyElementsOf(plain.stdout());
        assertThat(agent.stderrStartingWith("[kmem4j] WARN"))
                .as("[kmem4j] WARN lines on stderr of %s\n%s", agent, agent.description()).hasSize(1);
        assertThat(agent.stderrStartingWith("[kmem4j] INFO"))
                .as("[kmem4j] INFO lines on stderr of %s (interception must be off)\n%s", agent, agent.description())
                .isEmpty();
        // The one WARN line explains why, naming the (simulated) missing constructor's NoSuchMethodException.
        assertNoTrouble(agent, l -> l.startsWith("[kmem4j] WARN interception is off"));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("io.kmem4j.it.TestJdks#full")
    void directAppWithAnInvalidSettingRunsOnTheJdkAllocator(Jdk jdk) {
        AppRun plain = directBaseline(jdk);
        AppRun agent = AppRun.run(jdk, "direct-invalid-" + jdk.label(), List.of(AppRun.javaagent("chunkSizeBytes=5")),
                directClasspath(), DIRECT_APP, RUN_TIMEOUT);

        assertThat(agent.exit()).as("exit code of %s\n%s", agent, agent.description()).isZero();
        assertThat(agent.stdout()).as("stdout with an invalid setting vs. without the agent\n%s", agent.description())
                .containsExactlyElementsOf(plain.stdout());
        List<String> errors = agent.stderrStartingWith("[kmem4j] ERROR");
        assertThat(errors).as("[kmem4j] ERROR lines on stderr of %s\n%s", agent, agent.description()).hasSize(1);
        assertThat(errors.get(0)).as("the ERROR line names the setting and what is allowed")
                .contains("chunkSizeBytes=5").contains("allowed");
        assertThat(agent.stderrStartingWith("[kmem4j] INFO"))
                .as("[kmem4j] INFO lines on stderr of %s (nothing must be installed)\n%s", agent, agent.description())
                .isEmpty();
        assertThat(agent.stderr().stream().filter(l -> !l.startsWith(AppRun.AGENT_PREFIX)).collect(Collectors.toList()))
                .as("stderr lines not from the agent, %s\n%s", agent, agent.description()).isEmpty();
        assertNoTrouble(agent);

        // asked for a summary: the one line at exit says interception was off, and why (it once printed nothing)
        assertSummarySaysOff(jdk, "direct-invalid-summary-", "summary=true,chunkSizeBytes=5", plain, "chunkSizeBytes=5");
        // enabled=false with a summary asked for: the line at exit says so (it printed nothing: trial finding)
        assertSummarySaysOff(jdk, "direct-disabled-summary-", "enabled=false,summary=true", plain, "enabled=false");
    }

    /** The program runs as without the agent, and its one summary line at exit says interception was off, naming {@code why}. */
    private static void assertSummarySaysOff(Jdk jdk, String label, String options, AppRun plain, String why) {
        AppRun summary = AppRun.run(jdk, label + jdk.label(), List.of(AppRun.javaagent(options)), directClasspath(),
                DIRECT_APP, RUN_TIMEOUT);
        assertThat(summary.exit()).as("exit code of %s\n%s", summary, summary.description()).isZero();
        assertThat(summary.stdout()).as("stdout of %s\n%s", summary, summary.description())
                .containsExactlyElementsOf(plain.stdout());
        assertThat(summary.stderrStartingWith("[kmem4j] summary:"))
                .as("[kmem4j] summary lines of %s\n%s", summary, summary.description())
                .singleElement().asString().contains("interception was off").contains(why);
        assertNoTrouble(summary);
    }

    // ---------------------------------------------------------------- child-first class loader

    @ParameterizedTest(name = "{0}")
    @MethodSource("io.kmem4j.it.TestJdks#full")
    void childFirstClassLoaderAllocatesThroughTheAgent(Jdk jdk) {
        String cp = AppRun.classpath(AppRun.appClasses());
        AppRun plain = AppRun.run(jdk, "child-first-plain-" + jdk.label(), List.of(), cp, CHILD_FIRST_APP, RUN_TIMEOUT);
        assertThat(plain.exit()).as("exit code of %s\n%s", plain, plain.description()).isZero();
        assertThat(plain.stderr()).as("stderr of %s without the agent\n%s", plain, plain.description()).isEmpty();

        AppRun agent = AppRun.run(jdk, "child-first-agent-" + jdk.label(), List.of(AppRun.javaagent("summary=true")),
                cp, CHILD_FIRST_APP, RUN_TIMEOUT);

        assertThat(agent.exit()).as("exit code of %s\n%s", agent, agent.description()).isZero();
        assertThat(agent.stdoutLine("child-first: ok "))
                .as("ok line of %s\n%s", agent, agent.description())
                .hasValue("child-first: ok loader=io.kmem4j.it.apps.ChildFirstApp$ChildFirstLoader");
        assertThat(agent.stdout()).as("stdout with the agent vs. without\n%s", agent.description())
                .containsExactlyElementsOf(plain.stdout());
        long allocations = agent.summaryAllocations();
        System.out.println(TestJdks.LOG_PREFIX + "ChildFirstApp on JDK " + jdk.version() + ": allocations=" + allocations);
        assertThat(allocations).as("slab allocations of %s (the worker allocates 1000 buffers)\n%s", agent,
                agent.description()).isGreaterThanOrEqualTo(1000);
        assertNoTrouble(agent);
    }

    // ---------------------------------------------------------------- the application's own logging (C15)

    @ParameterizedTest(name = "{0}")
    @MethodSource("io.kmem4j.it.TestJdks#full")
    void applicationLoggingIsUntouchedByTheAgent(Jdk jdk) {
        Path conf = AppRun.writeFile("own-logging-app-conf", "logback.xml", APP_LOGBACK_XML);
        String cp = AppRun.classpath(conf, AppRun.appClasses(),
                AppRun.codeSource("org.slf4j.LoggerFactory"),
                AppRun.codeSource("ch.qos.logback.classic.LoggerContext"),
                AppRun.codeSource("ch.qos.logback.core.Context"));

        AppRun plain = AppRun.run(jdk, "own-logging-plain-" + jdk.label(), List.of(), cp, OWN_LOGGING_APP, RUN_TIMEOUT);
        assertThat(plain.exit()).as("exit code of %s\n%s", plain, plain.description()).isZero();
        assertThat(plain.stdout().stream().filter(l -> l.startsWith("APP INFO OwnLoggingApp - line ")))
                .as("the application's own log lines (its logback.xml) without the agent\n%s", plain.description())
                .hasSize(5);
        assertThat(plain.stdout()).as("SLF4J bound to Logback in %s", plain)
                .contains("own-logging: factory=ch.qos.logback.classic.LoggerContext", "own-logging: ok lines=5");
        assertThat(plain.stderr()).as("stderr of %s without the agent\n%s", plain, plain.description()).isEmpty();

        AppRun agent = AppRun.run(jdk, "own-logging-agent-" + jdk.label(), List.of(AppRun.javaagent("summary=true")),
                cp, OWN_LOGGING_APP, RUN_TIMEOUT);

        assertThat(agent.exit()).as("exit code of %s\n%s", agent, agent.description()).isZero();
        assertThat(agent.stdout()).as("stdout (the application's log) with the agent vs. without\n%s",
                agent.description()).containsExactlyElementsOf(plain.stdout());
        assertThat(agent.stderr().stream().filter(l -> !l.startsWith(AppRun.AGENT_PREFIX)).collect(Collectors.toList()))
                .as("stderr lines not from the agent (e.g. SLF4J / Logback warnings) of %s\n%s", agent,
                        agent.description()).isEmpty();
        assertThat(agent.stderr().stream().filter(l -> l.contains("SLF4J") || l.contains("logback")
                || l.startsWith("APP ")).collect(Collectors.toList()))
                .as("SLF4J / Logback text on stderr of %s\n%s", agent, agent.description()).isEmpty();
        assertThat(agent.stderrStartingWith("[kmem4j] INFO")).as("INFO lines of %s", agent).hasSize(1);
        assertThat(agent.summaryAllocations()).as("slab allocations of %s (1000 buffers)", agent)
                .isGreaterThanOrEqualTo(1000);
        assertNoTrouble(agent);
    }

    // ---------------------------------------------------------------- libraries behind a parent-first loader

    /**
     * The application's own Logback, loaded (like in a fat jar or an application server) by a
     * parent-first child of the system class loader, must load exactly as without the agent. The
     * agent jar is on the system class path, so anything in it under an original library name would
     * shadow the application's copy. {@code ConsoleCharsetPropertyDefiner} exists in logback-core
     * 1.5.18 only as a JDK 21+ multi-release class.
     */
    @ParameterizedTest(name = "{0}")
    @MethodSource("io.kmem4j.it.TestJdks#full")
    void applicationLibrariesBehindAParentFirstLoaderLoadAsWithoutTheAgent(Jdk jdk) {
        String cp = AppRun.classpath(AppRun.appClasses());
        String[] args = {
            AppRun.codeSource("ch.qos.logback.core.Context").toString(),
            AppRun.codeSource("ch.qos.logback.classic.LoggerContext").toString(),
            AppRun.codeSource("org.slf4j.LoggerFactory").toString(),
            "--",
            "ch.qos.logback.core.ConsoleAppender",
            "ch.qos.logback.core.property.ConsoleCharsetPropertyDefiner",
            "ch.qos.logback.classic.LoggerContext",
        };
        AppRun plain = AppRun.run(jdk, "libraries-plain-" + jdk.label(), List.of(), cp, LIBRARIES_APP, RUN_TIMEOUT, args);
        assertThat(plain.exit()).as("exit code of %s\n%s", plain, plain.description()).isZero();
        assertThat(plain.stdout()).as("stdout of %s", plain).contains("libraries: done");

        AppRun agent = AppRun.run(jdk, "libraries-agent-" + jdk.label(), List.of(AppRun.javaagent(null)), cp,
                LIBRARIES_APP, RUN_TIMEOUT, args);
        assertThat(agent.exit()).as("exit code of %s\n%s", agent, agent.description()).isZero();
        assertThat(agent.stdout()).as("how the application's libraries load with the agent vs. without\n%s",
                agent.description()).containsExactlyElementsOf(plain.stdout());
    }

    // ---------------------------------------------------------------- helpers

    private static String directClasspath() {
        return AppRun.classpath(AppRun.appClasses());
    }

    /** DirectApp without the agent on {@code jdk}: run once per JDK, and checked to be clean itself. */
    private static AppRun directBaseline(Jdk jdk) {
        return DIRECT_BASELINE.computeIfAbsent(jdk.home(), home -> {
            AppRun plain = AppRun.run(jdk, "direct-plain-" + jdk.label(), List.of(), directClasspath(), DIRECT_APP,
                    RUN_TIMEOUT);
            assertThat(plain.exit()).as("exit code of %s\n%s", plain, plain.description()).isZero();
            assertThat(plain.stdout()).as("stdout of %s\n%s", plain, plain.description())
                    .contains("direct-app: ok buffers=10000")
                    .anyMatch(l -> l.startsWith("direct-app: shutdown-hook ok buffers=2000 "));
            assertThat(plain.stdout().get(0)).as("first line of %s", plain).startsWith("direct-app: first capacity=100 ");
            assertThat(plain.stderr()).as("stderr of %s without the agent\n%s", plain, plain.description()).isEmpty();
            return plain;
        });
    }

    private static void assertNoTrouble(AppRun run) {
        assertNoTrouble(run, l -> false);
    }

    /** No exception / error / stack-trace text on stderr except in lines {@code expected} accepts; no FAIL on stdout. */
    private static void assertNoTrouble(AppRun run, Predicate<String> expected) {
        List<String> trouble = run.stderr().stream()
                .filter(l -> TROUBLE.matcher(l).matches() && !expected.test(l))
                .collect(Collectors.toList());
        assertThat(trouble).as("exception / error text on stderr of %s\n%s", run, run.description()).isEmpty();
        assertThat(run.stdout().stream().filter(l -> l.contains("FAIL")).collect(Collectors.toList()))
                .as("FAIL lines on stdout of %s\n%s", run, run.description()).isEmpty();
    }
}
