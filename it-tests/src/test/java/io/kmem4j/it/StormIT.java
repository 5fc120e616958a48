package io.kmem4j.it;

import static org.assertj.core.api.Assertions.assertThat;

import io.kmem4j.it.apps.StormApp;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * Allocation storms (field case C3) in a forked JVM with the agent, and the same program without it
 * as the control: 1, 2 and 8 threads loop {@code allocateDirect(s)} + {@code invokeCleaner} for s in
 * {256 B, 4 KiB, 16 KiB}, then one thread drops {@code allocateDirect(100)} in a loop (see
 * {@link StormApp}). The drop phase lasts {@value #DEFAULT_DROP_MILLIS} ms in the normal build and a
 * minute with {@code -Pstress} (system property {@value #DROP_PROPERTY}).
 *
 * <p><b>"No thread ever BLOCKED on a global lock"</b>, measured: JFR records every contended
 * monitor entry and every park of the storm threads with its stack (no sampling, no threshold), and
 * each is attributed to the code that took the lock ({@code LockContention}). Asserted: no storm
 * thread ever waited for a kmem4j lock that is not per size class, except at most once per thread
 * when it registers its thread cache on its first allocation ({@code ThreadRegistry.register}, the
 * registry of thread caches, which the statistics snapshot behind JMX also reads). Reported, not
 * asserted: waits for the per-class cache locks, and for the JDK's own global lock
 * ({@code jdk.internal.ref.Cleaner.add/remove} are {@code static synchronized} on 17-25, the
 * {@code CleanerList} of {@code java.nio.BufferCleaner} on 26+; every {@code DirectByteBuffer} passes
 * them, with or without kmem4j), with the control's figures next to
 * them, and the JVM's blocked counts ({@code ThreadMXBean}).
 *
 * <p><b>"Memory bounded by the live set plus the configured caches"</b>, as {@link CacheBound}
 * defines it, where the live set is what the slabs hold for live buffers ({@code ActiveObjects *
 * ObjectSize}): at the end of each loop phase (threads alive, holding nothing); during the drop phase,
 * the largest {@code BytesReserved} sampled against twice the largest live set sampled (the live set
 * plus at most one GC's worth of frees still on their way to the owner's inbox: GC-driven frees are
 * deferred, as in the Linux 6.18 UDP receive series); after the storm threads ended and two reaper
 * intervals passed; and after {@code trim}, nothing but what live threads and buffers need. No
 * {@code OutOfMemoryError} anywhere.
 */
@Timeout(value = 10, unit = TimeUnit.MINUTES)
class StormIT {

    static final String DROP_PROPERTY = "kmem4j.it.storm.dropMillis";
    static final long DEFAULT_DROP_MILLIS = 10_000;
    private static final long DROP_MILLIS = Long.getLong(DROP_PROPERTY, DEFAULT_DROP_MILLIS);
    private static final long PHASE_MILLIS = Long.getLong("kmem4j.it.storm.phaseMillis", 300);
    /** The control only needs the loop phases and a glimpse of the drop phase. */
    private static final long CONTROL_DROP_MILLIS = Math.min(DROP_MILLIS, 3000);
    /** A fixed heap (and so a fixed default MaxDirectMemorySize) on every machine. */
    private static final List<String> HEAP = List.of("-Xmx256m");
    private static final String APP = "io.kmem4j.it.apps.StormApp";
    /** Size class of the dropped 100-byte buffers with the default classes. */
    private static final long DROP_CLASS = 128;

    @ParameterizedTest(name = "{0}")
    @MethodSource("io.kmem4j.it.TestJdks#full")
    void allocationStormsNeverWaitForAGlobalKmem4jLockAndStayBounded(Jdk jdk) {
        String cp = AppRun.classpath(AppRun.appClasses());
        Duration timeout = Duration.ofMillis(DROP_MILLIS + 120_000);
        Path csv = Path.of("target", "storm", "storm-" + jdk.label() + ".csv").toAbsolutePath();
        List<String> agentArgs = new ArrayList<>(HEAP);
        agentArgs.add(AppRun.javaagent("summary=true"));
        AppRun agent = AppRun.run(jdk, "storm-agent-" + jdk.label(), agentArgs, cp, APP, timeout,
                String.valueOf(PHASE_MILLIS), String.valueOf(DROP_MILLIS), csv.toString());
        AppRun control = AppRun.run(jdk, "storm-plain-" + jdk.label(), HEAP, cp, APP, timeout,
                String.valueOf(PHASE_MILLIS), String.valueOf(CONTROL_DROP_MILLIS));
        for (AppRun run : List.of(agent, control)) {
            assertThat(run.exit()).as("exit code of %s\n%s", run, run.description()).isZero();
            assertThat(run.stdout()).as("stdout of %s\n%s", run, run.description())
                    .contains("storm: ok").noneMatch(l -> l.contains("FAIL"));
            List<String> all = new ArrayList<>(run.stdout());
            all.addAll(run.stderr());
            assertThat(all).as("output of %s\n%s", run, run.description()).noneMatch(l -> l.contains("OutOfMemoryError"));
        }

        Map<String, Map<String, String>> agentPhases = byPhase(agent, "storm: contention phase=");
        Map<String, Map<String, String>> controlPhases = byPhase(control, "storm: contention phase=");
        Map<String, Map<String, String>> agentLoops = byPhase(agent, "storm: loop phase=");
        Map<String, Map<String, String>> controlLoops = byPhase(control, "storm: loop phase=");
        for (String phase : agentPhases.keySet()) {
            Map<String, String> a = agentPhases.get(phase);
            Map<String, String> c = controlPhases.get(phase);
            String loops = agentLoops.containsKey(phase)
                    ? " ops=" + agentLoops.get(phase).get("ops") + "/" + controlLoops.get(phase).get("ops")
                    + " ThreadMXBean blockedCount=" + agentLoops.get(phase).get("blockedCount") + "/"
                    + controlLoops.get(phase).get("blockedCount")
                    : " drop ops=" + dropLine(agent).get("ops") + " in " + DROP_MILLIS + " ms/" + dropLine(control).get("ops")
                    + " in " + CONTROL_DROP_MILLIS + " ms";
            log(jdk, "phase " + phase + " (agent/control):" + loops + " contended: KMEM4J_GLOBAL=" + a.get("KMEM4J_GLOBAL")
                    + " KMEM4J_CACHE=" + a.get("KMEM4J_CACHE") + " JDK_CLEANER=" + a.get("JDK_CLEANER") + "/"
                    + c.get("JDK_CLEANER") + " JDK_OTHER=" + a.get("JDK_OTHER") + "/" + c.get("JDK_OTHER"));
        }
        assertThat(agentPhases.keySet()).as("phases reported by %s", agent).hasSize(10);

        // no storm thread waits for a global kmem4j lock, but once when it registers its thread cache
        for (String line : agent.stdout()) {
            if (!line.startsWith("storm: contention-site ") || !line.contains(" site=KMEM4J_GLOBAL|")) {
                continue;
            }
            Map<String, String> kv = KeyValues.parse(line);
            String phase = kv.get("phase");
            long threads = phase.equals("drop") ? 1 : Long.parseLong(phase.substring(phase.indexOf('x') + 1));
            assertThat(kv.get("site")).as("a storm thread waited for a global kmem4j lock: %s\n%s", line,
                    agent.description()).contains("io.kmem4j.core.ThreadRegistry.register:");
            assertThat(Long.parseLong(kv.get("count"))).as("waits at thread-cache registration, at most one per"
                    + " thread of the phase: %s", line).isLessThanOrEqualTo(threads);
        }

        assertMemoryBounded(jdk, agent);

        Map<String, String> summary = agent.summaryCounters();
        long ops = dropLineOps(agent);
        for (Map<String, String> loop : agentLoops.values()) {
            ops += Long.parseLong(loop.get("ops"));
        }
        long allocations = Long.parseLong(summary.get("allocations"));
        long fallbacks = Long.parseLong(summary.get("fallbacks"));
        log(jdk, "agent summary " + summary + "; storm operations " + ops + "; CSV " + Path.of("target", "storm",
                "storm-" + jdk.label() + ".csv"));
        assertThat(allocations + fallbacks).as("every storm allocation served or passed to the JDK: %s", summary)
                .isGreaterThanOrEqualTo(ops);
        assertThat(Long.parseLong(summary.get("frees"))).as("frees == allocations - live: %s", summary)
                .isEqualTo(allocations - Long.parseLong(summary.get("live")));
    }

    private static void assertMemoryBounded(Jdk jdk, AppRun agent) {
        String config = agent.requireLine("storm: agent=true config ").substring("storm: agent=true config ".length());
        CacheBound bound = new CacheBound(config);
        long loopThreads = 0;
        for (int t : StormApp.THREADS) {
            loopThreads += t; // threads of earlier phases may not be reaped yet
        }
        for (String line : agent.stdout()) {
            if (line.startsWith("storm: cache name=")) {
                Map<String, String> c = KeyValues.parse(line);
                long size = Long.parseLong(c.get("ObjectSize"));
                long threads = size == DROP_CLASS ? 1 : isLoopClass(size) ? loopThreads : 2;
                bound.sizeClass(size, Long.parseLong(c.get("PagesPerSlab")), threads);
            }
        }
        List<String> figures = new ArrayList<>();
        for (String line : agent.stdout()) {
            if (line.startsWith("storm: checkpoint ")) {
                Map<String, String> kv = KeyValues.parse(line);
                long reserved = Long.parseLong(kv.get("reserved"));
                long live = Long.parseLong(kv.get("liveObjectBytes"));
                assertThat(reserved).as("BytesReserved at the end of phase %s: %s; %s", kv.get("phase"), line,
                        bound.explain(live)).isLessThanOrEqualTo(bound.bound(live));
                figures.add(kv.get("phase") + " " + reserved);
            }
        }
        assertThat(figures).as("checkpoints of %s\n%s", agent, agent.description()).hasSize(9);

        Map<String, String> drop = byPhase(agent, "storm: memory phase=").get("drop");
        long maxReserved = Long.parseLong(drop.get("maxReserved"));
        long maxLive = Long.parseLong(drop.get("maxLiveObjectBytes"));
        assertThat(Long.parseLong(drop.get("samples"))).as("memory samples of the drop phase: %s", drop).isPositive();
        assertThat(maxReserved).as("largest BytesReserved of the drop phase vs twice the largest live set: %s; %s",
                drop, bound.explain(2 * maxLive)).isLessThanOrEqualTo(bound.bound(2 * maxLive));

        Map<String, String> reaped = KeyValues.parse(agent.requireLine("storm: after-reap "));
        long reapedReserved = Long.parseLong(reaped.get("BytesReserved"));
        long reapedLive = Long.parseLong(reaped.get("liveObjectBytes"));
        assertThat(KeyValues.parse(agent.requireLine("storm: after-gc ")).get("stormObjects"))
                .as("objects of the storm's size classes still in use after GC (dropped buffers never freed)").isEqualTo("0");
        assertThat(reapedReserved).as("BytesReserved once the storm threads ended: %s; %s", reaped,
                bound.explain(reapedLive)).isLessThanOrEqualTo(bound.bound(reapedLive));

        Map<String, String> trimmed = KeyValues.parse(agent.requireLine("storm: after-trim "));
        long trimmedReserved = Long.parseLong(trimmed.get("BytesReserved"));
        if (trimmed.get("LiveBuffers").equals("0") && trimmed.get("ThreadCaches").equals("0")) {
            assertThat(trimmedReserved).as("nothing live, no thread cache: trim gives every chunk back: %s", trimmed)
                    .isZero();
        } else {
            assertThat(trimmedReserved).as("after trim: %s; after the reaper: %s", trimmed, reaped)
                    .isLessThanOrEqualTo(reapedReserved);
        }
        log(jdk, "memory: BytesReserved at the end of each loop phase " + figures + "; drop phase " + drop
                + "; after the reaper " + reaped + "; after trim " + trimmed + "; " + bound.explain(0));
    }

    private static boolean isLoopClass(long size) {
        for (int s : StormApp.SIZES) {
            if (s == size) {
                return true;
            }
        }
        return false;
    }

    /** The key/values of every stdout line starting with {@code prefix}, by their {@code phase}. */
    private static Map<String, Map<String, String>> byPhase(AppRun run, String prefix) {
        Map<String, Map<String, String>> phases = new LinkedHashMap<>();
        for (String line : run.stdout()) {
            if (line.startsWith(prefix)) {
                Map<String, String> kv = KeyValues.parse(line);
                phases.put(kv.get("phase"), kv);
            }
        }
        return phases;
    }

    private static Map<String, String> dropLine(AppRun run) {
        return KeyValues.parse(run.requireLine("storm: drop ops="));
    }

    private static long dropLineOps(AppRun run) {
        return Long.parseLong(dropLine(run).get("ops"));
    }

    private static void log(Jdk jdk, String text) {
        System.out.println(TestJdks.LOG_PREFIX + "C3 JDK " + jdk.version() + ": " + text);
    }
}
