package io.kmem4j.it;

import static io.kmem4j.it.ConformanceIT.count;
import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * Field cases C7, C10, C18 and C19 of {@code docs/cases.md} through the agent, in forked JVMs on
 * every JDK: {@code apps.RecyclingCasesApp} runs on the JDK alone, with the agent (memory zeroed on
 * release, the default), with {@code zeroOnFree=false}, and in debug mode (freed memory poisoned). Its
 * stdout (but for the counters lines) must be the same in every run: the same exception and message
 * for the refused view (C7), no exception from 100,000 racing releases and no byte shared after a stale
 * release (C10), every buffer zero-filled at every size-class boundary also after recycling (C18), no
 * state surviving recycling (C19). With the agent, the allocator bean's figures read in-process show the
 * root's memory back at once and the refused view freeing nothing (C7), and every racing or stale
 * release counted exactly once (C10). None of these cases names a JDK flag.
 */
@Timeout(value = 10, unit = TimeUnit.MINUTES)
class CasesMoreIT {

    private static final Duration RUN_TIMEOUT = Duration.ofSeconds(120);
    private static final String APP = "io.kmem4j.it.apps.RecyclingCasesApp";
    private static final int RACES = 100_000;
    private static final int DISTINCT = 1000;

    @ParameterizedTest(name = "{0}")
    @MethodSource("io.kmem4j.it.TestJdks#full")
    void c7c10c18c19RecyclingKeepsNothingOfTheLastOwner(Jdk jdk) {
        String cp = AppRun.classpath(AppRun.appClasses());
        AppRun plain = AppRun.run(jdk, "recycling-plain-" + jdk.label(), List.of(), cp, APP, RUN_TIMEOUT);
        assertThat(plain.exit()).as("exit code of %s (the JDK alone)\n%s", plain, plain.description()).isZero();
        List<String> expected = withoutCounters(plain);
        assertThat(expected).as("stdout of %s", plain).contains("recycling: ok",
                "c7: invokeCleaner(allocateDirect(1031).alignedSlice(8)) -> java.lang.IllegalArgumentException:"
                        + " duplicate or slice",
                "c10: (a) races=" + RACES + " exceptions=0",
                "c19: order=BIG_ENDIAN position=0 limit=64 capacity=64 reset-throws-InvalidMarkException=true"
                        + " direct=true readOnly=false getInt(0)=0")
                .noneMatch(l -> l.contains("FAIL"));

        List<String> figures = new ArrayList<>();
        for (List<String> flags : List.of(List.of(AppRun.javaagent("summary=true")),
                List.of(AppRun.javaagent("summary=true,zeroOnFree=false")),
                List.of("-Dkmem4j.debug=true", AppRun.javaagent("summary=true")))) {
            String variant = flags.size() > 1 ? "debug" : flags.get(0).contains("zeroOnFree") ? "zeroOnAllocation" : "agent";
            AppRun agent = AppRun.run(jdk, "recycling-" + variant + "-" + jdk.label(), flags, cp, APP, RUN_TIMEOUT);
            assertThat(agent.exit()).as("exit code of %s\n%s", agent, agent.description()).isZero();
            assertThat(withoutCounters(agent)).as("stdout of %s vs. the JDK alone (%s)\n%s", agent, plain,
                    agent.description()).containsExactlyElementsOf(expected);
            assertCounters(agent);
            Map<String, String> summary = agent.summaryCounters();
            assertThat(count(summary, "live")).as("live slab buffers at exit of %s: %s", agent, summary).isZero();
            assertThat(count(summary, "frees")).as("frees == allocations at exit of %s: %s", agent, summary)
                    .isEqualTo(count(summary, "allocations"));
            figures.add(variant + ": allocations=" + summary.get("allocations") + " frees=" + summary.get("frees")
                    + " fallbacks=" + summary.get("fallbacks") + " " + counters(agent, "c10", "after-stale"));
        }
        System.out.println(TestJdks.LOG_PREFIX + "C7/C10/C18/C19 JDK " + jdk.version() + ": "
                + String.join("; ", figures));
    }

    /** The allocator bean's figures at each point the app reports them. */
    private static void assertCounters(AppRun run) {
        Map<String, Long> start = counters(run, "recycling", "start");
        Map<String, Long> beforeRoot = counters(run, "c7", "before-root");
        Map<String, Long> afterRoot = counters(run, "c7", "after-root");
        assertThat(afterRoot.get("ExplicitFrees") - beforeRoot.get("ExplicitFrees"))
                .as("C7: invokeCleaner of the root returns its memory at once (%s)", run).isEqualTo(1);
        assertThat(afterRoot.get("LiveBuffers")).as("C7: live buffers after the root's release (%s)", run)
                .isEqualTo(beforeRoot.get("LiveBuffers") - 1);
        Map<String, Long> beforeView = counters(run, "c7", "before-view");
        Map<String, Long> afterView = counters(run, "c7", "after-view");
        assertThat(afterView).as("C7: the refused release of the view frees nothing (%s)", run).isEqualTo(beforeView);

        Map<String, Long> afterRaces = counters(run, "c10", "after-races");
        assertThat(afterRaces.get("Allocations") - start.get("Allocations")).as("C10 slab allocations (%s)", run)
                .isGreaterThanOrEqualTo(RACES);
        assertThat(afterRaces.get("LiveBuffers")).as("C10 (a): each raced buffer released exactly once (%s)", run)
                .isEqualTo(start.get("LiveBuffers"));
        Map<String, Long> afterStale = counters(run, "c10", "after-stale");
        assertThat(afterStale.get("LiveBuffers")).as("C10 (b): the stale release freed nothing: b2 and the %d"
                + " patterned buffers are live (%s)", DISTINCT, run).isEqualTo(start.get("LiveBuffers") + DISTINCT + 1);
        for (Map<String, Long> c : List.of(afterRaces, afterStale)) {
            assertThat(c.get("DoubleFrees")).as("double frees (%s)", run).isZero();
            assertThat(c.get("InterceptorFailures")).as("interceptor failures (%s)", run).isZero();
        }
    }

    /** The figures of the line {@code <kase>: counters <when> Name=value ...}. */
    private static Map<String, Long> counters(AppRun run, String kase, String when) {
        String prefix = kase + ": counters " + when + " ";
        String line = run.stdoutLine(prefix).orElseThrow(() -> new AssertionError(
                "no stdout line starting with '" + prefix + "' in " + run + "\n" + run.description()));
        Map<String, Long> values = new java.util.LinkedHashMap<>();
        KeyValues.parse(line).forEach((k, v) -> values.put(k, Long.parseLong(v)));
        assertThat(values).as("allocator bean figures in %s", line).containsKeys("Allocations", "LiveBuffers",
                "ExplicitFrees", "DoubleFrees");
        return values;
    }

    private static List<String> withoutCounters(AppRun run) {
        return run.stdout().stream().filter(l -> !l.contains(": counters ")).collect(Collectors.toList());
    }
}
