package io.kmem4j.it;

import static io.kmem4j.it.JmxClient.ALLOCATOR;
import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;
import javax.management.ObjectName;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * When kmem4j cannot serve (a JDK whose internals do not match, or whose class files are newer than
 * ByteBuddy reads; simulated with {@code -Dkmem4j.simulateUnsupportedJdk=true|classFileVersion} on
 * every supported JDK), it says so everywhere the user looks (issue 13, part 2): one WARN line that
 * names the JDK and what did not match and gives advice that applies to agent users; with
 * {@code summary=true} one summary line saying interception was off and why;
 * {@code kmem4j:type=Allocator} registered with {@code Enabled=false} and {@code DisabledReason} (and
 * no cache beans); {@code attach} and {@code slabtop} print the target's reason and exit 1 at once
 * ({@code attach --wait 600} would outlast this test's time-out if it waited for a serving bean).
 * The application runs on the JDK's allocator unchanged.
 */
@Timeout(value = 3, unit = TimeUnit.MINUTES)
class UnsupportedJdkIT {

    private static final Duration RUN_TIMEOUT = Duration.ofSeconds(60);
    private static final Duration ATTACH_TIMEOUT = Duration.ofSeconds(30);
    private static final String SIMULATE = "-Dkmem4j.simulateUnsupportedJdk=";
    private static final String WARN = "[kmem4j] WARN interception is off, the application runs on the JDK's allocator: ";
    private static final String SUMMARY = "[kmem4j] summary: interception was off, every direct buffer came from the"
            + " JDK's allocator: ";
    private static final String ADVICE = "is tested on JDK 17, 21, 25, 26 and 27; no flag or option turns it on here";
    private static final ObjectName CACHES = JmxClient.objectName("kmem4j:type=SlabCache,*");

    @ParameterizedTest(name = "{0}")
    @MethodSource("io.kmem4j.it.TestJdks#all")
    void withTheAgentOnAJdkThatDoesNotMatchEveryPlaceSaysWhy(Jdk jdk) {
        try (ForkedJvm jvm = ForkedJvm.builder(jdk, "off-echo-" + jdk.label())
                .jvmArgs(SIMULATE + "true", AppRun.javaagent("summary=true"))
                .jar(Artifacts.samplesJar())
                .programArgs("echo", "--messages", "300", "--connections", "2", "--hold")
                .start()) {
            jvm.awaitStdoutLine("echo: holding", RUN_TIMEOUT);
            assertThat(jvm.stdoutLines()).as(jvm.describe()).anyMatch(l -> l.startsWith("echo: messages=300 ")
                    && l.contains(" verified=true mismatches=0"));
            String warn = oneLine(jvm.stderrLines(), WARN, jvm.describe());
            String reason = warn.substring(WARN.length(), warn.indexOf("; kmem4j "));
            assertThat(reason).as("the WARN line names the JDK and what did not match\n%s", jvm.describe())
                    .contains("JDK " + jdk.version()).contains("do not match kmem4j's needs")
                    .contains("DirectByteBuffer's mapped-buffer constructor").contains("missing on purpose");
            assertThat(warn).as("advice for agent users, not --add-opens").contains(ADVICE).doesNotContain("--add-opens");

            String bean;
            try (JmxClient jmx = JmxClient.attach(jvm.pid(), jvm + " on " + jdk, ATTACH_TIMEOUT)) {
                jmx.awaitRegistered(ALLOCATOR, ATTACH_TIMEOUT);
                assertThat(jmx.read(ALLOCATOR, "Enabled")).as("Enabled of %s", ALLOCATOR).isEqualTo(false);
                bean = (String) jmx.read(ALLOCATOR, "DisabledReason");
                assertThat(bean).as("DisabledReason is the WARN line's reason").isEqualTo(reason);
                assertThat(jmx.readLongs(ALLOCATOR, "Allocations", "BytesReserved", "SlabCaches"))
                        .containsEntry("Allocations", 0L).containsEntry("BytesReserved", 0L)
                        .containsEntry("SlabCaches", 0L);
                assertThat(jmx.connection().queryNames(CACHES, null)).as("SlabCache beans").isEmpty();
            } catch (java.io.IOException e) {
                throw new AssertionError(e);
            }

            AgentCli slabtop = AgentCli.run(jdk, "off-slabtop", "slabtop", String.valueOf(jvm.pid()), "--once");
            assertThat(slabtop.exit()).as(slabtop.description()).isEqualTo(1);
            assertThat(slabtop.stdout()).as(slabtop.description()).isEmpty();
            assertThat(slabtop.stderr()).as(slabtop.description()).singleElement().asString()
                    .contains("pid " + jvm.pid() + " has the kmem4j agent but interception is off").endsWith(reason);

            // attach loads the agent again: the first load's state stands (one INFO line), and attach answers at once
            AgentCli attach = AgentCli.run(jdk, "off-attach-again", "attach", String.valueOf(jvm.pid()), "--wait", "600");
            assertThat(attach.exit()).as(attach.description()).isEqualTo(1);
            assertThat(attach.stderr()).as(attach.description()).singleElement().asString()
                    .contains("pid " + jvm.pid() + " loaded the agent but interception is off").endsWith(reason);

            jvm.closeStdin();
            assertThat(jvm.waitForExit(RUN_TIMEOUT)).as("exit code\n%s", jvm.describe()).isZero();
            assertThat(jvm.stderrLines().stream().filter(l -> l.startsWith("[kmem4j] summary:")))
                    .as("the summary at exit is one line saying why\n%s", jvm.describe())
                    .containsExactly(SUMMARY + reason);
            assertThat(jvm.stderrLines().stream().filter(l -> l.startsWith("[kmem4j] INFO")))
                    .as("no serving INFO line, only the second load's 'changes nothing'\n%s", jvm.describe())
                    .containsExactly("[kmem4j] INFO kmem4j was already loaded into this JVM and is off (" + reason
                            + "); this attach changes nothing");
            log(jdk, "premain WARN: " + warn + " | slabtop: " + slabtop.stderr().get(0));
        }
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("io.kmem4j.it.TestJdks#all")
    void attachToAJdkThatDoesNotMatchAnswersAtOnce(Jdk jdk) {
        try (ForkedJvm jvm = ForkedJvm.builder(jdk, "off-attach-target-" + jdk.label())
                .jvmArgs(SIMULATE + "true", "-XX:+EnableDynamicAgentLoading")
                .jar(Artifacts.samplesJar())
                .programArgs("echo", "--messages", "100", "--connections", "1", "--hold")
                .start()) {
            jvm.awaitStdoutLine("echo: holding", RUN_TIMEOUT);
            AgentCli attach = AgentCli.run(jdk, "off-attach", "attach", String.valueOf(jvm.pid()), "--wait", "600");
            assertThat(attach.exit()).as(attach.description()).isEqualTo(1);
            assertThat(attach.stdout()).as(attach.description()).isEmpty();
            String line = attach.stderr().stream().collect(Collectors.joining("\n"));
            assertThat(attach.stderr()).as(attach.description()).hasSize(1);
            assertThat(line).as(attach.description())
                    .startsWith("kmem4j: pid " + jvm.pid() + " loaded the agent but interception is off, it runs on the"
                            + " JDK's allocator: the java.nio internals of JDK " + jdk.version())
                    .contains("missing on purpose");
            jvm.awaitLine(ForkedJvm.Channel.STDERR, "the agent's WARN line", l -> l.startsWith(WARN), RUN_TIMEOUT);
            jvm.closeStdin();
            assertThat(jvm.waitForExit(RUN_TIMEOUT)).as("exit code\n%s", jvm.describe()).isZero();
            assertThat(jvm.stderrLines().stream().filter(l -> l.startsWith("[kmem4j]")))
                    .as("the target's kmem4j lines\n%s", jvm.describe()).hasSize(1);
            log(jdk, "attach: " + line);
        }
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("io.kmem4j.it.TestJdks#all")
    void classFilesNewerThanByteBuddyReadsGetTheSameFallback(Jdk jdk) {
        String cp = AppRun.classpath(AppRun.appClasses());
        AppRun plain = AppRun.run(jdk, "off-classfile-plain-" + jdk.label(), List.of(), cp,
                "io.kmem4j.it.apps.DirectApp", RUN_TIMEOUT);
        AppRun run = AppRun.run(jdk, "off-classfile-" + jdk.label(),
                List.of(SIMULATE + "classFileVersion", AppRun.javaagent("summary=true")), cp,
                "io.kmem4j.it.apps.DirectApp", RUN_TIMEOUT);
        assertThat(run.exit()).as(run.description()).isZero();
        assertThat(run.stdout()).as("stdout vs. without the agent\n%s", run.description())
                .containsExactlyElementsOf(plain.stdout());
        String warn = oneLine(run.stderr(), WARN, run.description());
        assertThat(warn).as(run.description()).contains("the class files of JDK " + jdk.version())
                .contains("newer than the bytecode library in kmem4j reads (ASM: up to version ").contains(ADVICE);
        assertThat(run.stderrStartingWith("[kmem4j] summary:")).as(run.description()).singleElement().asString()
                .startsWith(SUMMARY + "the class files of JDK " + jdk.version());
        assertThat(run.stderr().stream().filter(l -> l.startsWith("[kmem4j]")))
                .as("the WARN line and the summary line, nothing else\n%s", run.description()).hasSize(2);
        log(jdk, "class files: " + warn);
    }

    private static String oneLine(List<String> lines, String prefix, String description) {
        List<String> found = lines.stream().filter(l -> l.startsWith(prefix)).collect(Collectors.toList());
        assertThat(found).as("lines starting with '%s'\n%s", prefix, description).hasSize(1);
        assertThat(lines.stream().filter(l -> l.startsWith("[kmem4j] WARN") || l.startsWith("[kmem4j] ERROR")))
                .as("WARN and ERROR lines\n%s", description).hasSize(1);
        return found.get(0);
    }

    private static void log(Jdk jdk, String text) {
        System.out.println(TestJdks.LOG_PREFIX + "off on JDK " + jdk.version() + ": " + text);
    }
}
