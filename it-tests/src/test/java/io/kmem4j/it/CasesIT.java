package io.kmem4j.it;

import static io.kmem4j.it.ConformanceIT.count;
import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.kmem4j.it.apps.BeanReads;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * Field cases of {@code docs/cases.md} as forked-JVM runs of small plain programs
 * ({@code io.kmem4j.it.apps}), with the JDK flags each case names, with and without the agent. Each
 * case prints one {@code [kmem4j-it] C<n> JDK <v>: ...} line with its key figures. Nothing here
 * asserts on time; times are printed.
 */
@Timeout(value = 10, unit = TimeUnit.MINUTES)
class CasesIT {

    /** A run of one of these programs takes a few seconds. */
    private static final Duration RUN_TIMEOUT = Duration.ofSeconds(60);

    private static final String LIMIT_APP = "io.kmem4j.it.apps.DirectLimitApp";
    private static final String CACHED_APP = "io.kmem4j.it.apps.CachedThenLargeApp";
    private static final String ACCOUNT_APP = "io.kmem4j.it.apps.DirectAccountApp";
    private static final String TEMP_APP = "io.kmem4j.it.apps.TempBufferApp";
    private static final String VIEW_APP = "io.kmem4j.it.apps.LiveViewApp";
    private static final String REMOTE_APP = "io.kmem4j.it.apps.RemoteFreeApp";

    private static final String MAX_DIRECT_64M = "-XX:MaxDirectMemorySize=64m";
    private static final long LIMIT = 64L << 20;
    private static final long MIB = 1L << 20;
    /** Direct memory the JDK itself may take in these programs (e.g. an 8 KiB temporary I/O buffer). */
    private static final long JDK_INTERNAL_SLACK = 64 * 1024;
    /** A chunk as the JDK's pool counts it with the default {@code chunkSizeBytes} (4 MiB + 4 KiB pad). */
    private static final long CHUNK_RESERVATION = 4 * MIB + 4096;
    /** The allocator bean's counters that must not move when a request fails with OutOfMemoryError. */
    private static final List<String> NO_LEAK_COUNTERS = List.of("Allocations", "Frees", "ExplicitFrees", "GcFrees",
            "LiveBuffers", "BytesInUse", "BytesReserved", "Chunks", "DoubleFrees", "InterceptorFailures");

    private static String cp() {
        return AppRun.classpath(AppRun.appClasses());
    }

    // ---------------------------------------------------------------- C1 (a)

    /**
     * 1000 times allocate 1 MiB and drop it under a 64 MiB limit, with and without
     * {@code -XX:+DisableExplicitGC}, with and without the agent: wherever the JDK alone completes, the
     * agent completes; where it does not (DisableExplicitGC: nothing else allocates on the heap, so no GC
     * frees the dropped buffers), the agent gets at least as far.
     */
    @ParameterizedTest(name = "{0}")
    @MethodSource("io.kmem4j.it.TestJdks#full")
    void c1aChurnAtTheLimit(Jdk jdk) {
        List<String> figures = new ArrayList<>();
        for (boolean disableExplicitGc : new boolean[] {false, true}) {
            List<String> flags = new ArrayList<>(List.of(MAX_DIRECT_64M));
            if (disableExplicitGc) {
                flags.add("-XX:+DisableExplicitGC");
            }
            String variant = disableExplicitGc ? "DisableExplicitGC" : "default";
            AppRun plain = AppRun.run(jdk, "c1a-plain-" + variant + "-" + jdk.label(), flags, cp(), LIMIT_APP,
                    RUN_TIMEOUT, "churn");
            List<String> agentFlags = new ArrayList<>(flags);
            agentFlags.add(AppRun.javaagent("summary=true"));
            AppRun agent = AppRun.run(jdk, "c1a-agent-" + variant + "-" + jdk.label(), agentFlags, cp(), LIMIT_APP,
                    RUN_TIMEOUT, "churn");
            for (AppRun run : List.of(plain, agent)) {
                assertThat(run.exit()).as("exit code of %s\n%s", run, run.description()).isZero();
            }
            Map<String, String> p = KeyValues.parse(line(plain, "c1a: completed="));
            Map<String, String> a = KeyValues.parse(line(agent, "c1a: completed="));
            int plainDone = Integer.parseInt(p.get("completed"));
            int agentDone = Integer.parseInt(a.get("completed"));
            figures.add(variant + ": JDK alone completed=" + plainDone + "/1000 (" + p.get("millis") + " ms"
                    + plain.stdoutLine("c1a: oom").map(l -> ", " + l.substring(5)).orElse("") + "), agent completed="
                    + agentDone + "/1000 (" + a.get("millis") + " ms, fallbacks=" + agent.summaryCounters().get("fallbacks")
                    + ")");
            if (!disableExplicitGc) {
                assertThat(plainDone).as("the JDK alone completes without DisableExplicitGC (%s)\n%s", plain,
                        plain.description()).isEqualTo(1000);
            }
            if (plainDone == 1000) {
                assertThat(agentDone).as("%s: the JDK alone completes, so must the agent\n%s", variant,
                        agent.description()).isEqualTo(1000);
            } else {
                assertThat(agentDone).as("%s: the agent gets at least as far as the JDK alone (%d)\n%s", variant,
                        plainDone, agent.description()).isGreaterThanOrEqualTo(plainDone);
            }
        }
        log("C1a", jdk, String.join("; ", figures));
    }

    // ---------------------------------------------------------------- C1 (c)

    /**
     * Four threads keep 512 live 16 KiB buffers each (32 MiB) under a 64 MiB limit and replace a random
     * one 25,000 times each, dropping the old one: only GC frees them, and every few hundred requests
     * meet the limit. The JDK alone completes; so must the agent. Before kmem4j reclaimed at the limit
     * itself ({@code AtTheLimit}), requests it passed on ran the JDK's loop, whose collection gave
     * kmem4j's memory back to kmem4j and not to the JDK's account: that loop then threw
     * ({@code Cannot reserve 16384 bytes ... (allocated: 67104768, limit: 67108864)}, all four
     * threads, one run in three on a busy machine). Times are printed, not asserted.
     */
    @ParameterizedTest(name = "{0}")
    @MethodSource("io.kmem4j.it.TestJdks#full")
    void c1cThreadsDroppingBuffersAtTheLimit(Jdk jdk) {
        String[] args = {"drop", "16384", "4", "25000", "512"};
        AppRun plain = AppRun.run(jdk, "c1c-plain-" + jdk.label(), List.of(MAX_DIRECT_64M), cp(), LIMIT_APP,
                RUN_TIMEOUT, args);
        AppRun agent = AppRun.run(jdk, "c1c-agent-" + jdk.label(), List.of(MAX_DIRECT_64M, AppRun.javaagent("summary=true")),
                cp(), LIMIT_APP, RUN_TIMEOUT, args);
        for (AppRun run : List.of(plain, agent)) {
            assertThat(run.exit()).as("exit code of %s\n%s", run, run.description()).isZero();
        }
        Map<String, String> p = KeyValues.parse(line(plain, "c1c: completed="));
        Map<String, String> a = KeyValues.parse(line(agent, "c1c: completed="));
        assertThat(p.get("oom")).as("the JDK alone completes (%s)\n%s", plain, plain.description()).isEqualTo("0");
        assertThat(a.get("oom")).as("OutOfMemoryErrors with the agent, where the JDK alone had none\n%s",
                agent.description()).isEqualTo("0");
        assertThat(agent.summaryAllocations()).as("requests kmem4j served (the rest went to the JDK's path)\n%s",
                agent.description()).isGreaterThan(50_000);
        log("C1c", jdk, "JDK alone " + p.get("millis") + " ms, agent " + a.get("millis") + " ms (kmem4j allocations="
                + agent.summaryAllocations() + ", fallbacks=" + agent.summaryCounters().get("fallbacks") + ")");
    }

    // ---------------------------------------------------------------- C1 (b)

    /**
     * 1 MiB buffers (passed to the JDK) live up to the 64 MiB limit, then one more: the JDK's
     * OutOfMemoryError, interrupt status untouched, the allocator's counters unmoved (but for the two
     * requests it passed to the JDK), and the JVM serves again after some are released.
     */
    @ParameterizedTest(name = "{0}")
    @MethodSource("io.kmem4j.it.TestJdks#full")
    void c1bLiveOneMebibyteBuffersUpToTheLimit(Jdk jdk) {
        c1bLive(jdk, 1 << 20);
    }

    /**
     * The same with 64 KiB buffers, which the agent serves from slabs until no further chunk fits under
     * the limit; the rest of the budget goes to JDK buffers. The error must still be the JDK's.
     *
     * <p>The fill time and the longest single allocation are printed, not asserted. Until commit
     * d7b9bb9 every 64 KiB request after the slabs were full first tried to reserve a new chunk, which
     * failed only after {@code java.nio.Bits}' GC-and-back-off loop (about half a second), and only then
     * went to the JDK: filling the limit took ~35 s instead of ~0.6 s (JDK 17.0.15 and 25.0.3).
     */
    @ParameterizedTest(name = "{0}")
    @MethodSource("io.kmem4j.it.TestJdks#full")
    void c1bLiveSlabBuffersUpToTheLimit(Jdk jdk) {
        c1bLive(jdk, 64 * 1024);
    }

    private void c1bLive(Jdk jdk, int size) {
        String tag = size == (1 << 20) ? "1m" : "64k";
        AppRun plain = AppRun.run(jdk, "c1b-" + tag + "-plain-" + jdk.label(), List.of(MAX_DIRECT_64M), cp(),
                LIMIT_APP, RUN_TIMEOUT, "live", String.valueOf(size));
        AppRun agent = AppRun.run(jdk, "c1b-" + tag + "-agent-" + jdk.label(),
                List.of(MAX_DIRECT_64M, AppRun.javaagent("summary=true")), cp(), LIMIT_APP, RUN_TIMEOUT, "live",
                String.valueOf(size));

        String expectedStart = "Cannot reserve " + size + " bytes of direct buffer memory (allocated: ";
        for (AppRun run : List.of(plain, agent)) {
            assertThat(run.exit()).as("exit code of %s\n%s", run, run.description()).isZero();
            assertThat(run.stdout()).as("stdout of %s\n%s", run, run.description())
                    .noneMatch(l -> l.contains("FAIL")).anyMatch(l -> l.startsWith("c1b: done"));
            for (String which : List.of("first-oom", "plain", "interrupted")) {
                String message = message(run, "c1b: " + which + " message=");
                assertThat(message).as("%s OutOfMemoryError message of %s\n%s", which, run, run.description())
                        .startsWith(expectedStart).contains("limit: " + LIMIT + ")");
            }
            for (String which : List.of("plain", "interrupted")) {
                Map<String, String> kv = KeyValues.parse(line(run, "c1b: " + which + " millis="));
                assertThat(kv.get("interruptedAfter")).as("interrupt status after the failed call (%s) of %s", which, run)
                        .isEqualTo(kv.get("interruptedBefore"));
            }
        }
        Map<String, String> plainFill = KeyValues.parse(line(plain, "c1b: live="));
        Map<String, String> agentFill = KeyValues.parse(line(agent, "c1b: live="));
        int plainLive = Integer.parseInt(plainFill.get("live"));
        int agentLive = Integer.parseInt(agentFill.get("live"));
        // Before the fill the program has one small buffer through the agent: the bean reads' 8 KiB (see
        // BeanReads.AT_START). Its chunk (1 MiB case) or its slab (64 KiB case, in a chunk the 64 KiB slabs
        // share) is budget the JDK alone does not spend; the fill itself must cost nothing more.
        Map<String, String> start = KeyValues.parse(line(agent, BeanReads.AT_START));
        if (size == (1 << 20)) {
            // the agent passes 1 MiB requests to the JDK and takes no chunk for them
            long reservedBefore = Long.parseLong(start.get("BytesReserved"));
            long lost = (reservedBefore + size - 1) / size;
            assertThat(agentLive).as("live 1 MiB buffers under the limit with the agent vs. %d without, %d bytes"
                    + " reserved before the fill\n%s", plainLive, reservedBefore, agent.description())
                    .isGreaterThanOrEqualTo(plainLive - (int) lost);
            // at most what was reserved before it: the empty chunk may have gone back under the limit's pressure
            assertThat(Long.parseLong(KeyValues.parse(line(agent, "c1b: counters-before ")).get("BytesReserved")))
                    .as("bytes reserved after the fill: at most what was reserved before it\n%s", agent.description())
                    .isLessThanOrEqualTo(reservedBefore);
        } else {
            // slab buffers: chunk pads (4 KiB per 4 MiB chunk) may cost one 64 KiB buffer of the budget
            long agentBytes = (long) agentLive * size;
            // another cache's slab in a chunk displaces whole 64 KiB slabs (the largest) from it
            long otherSlabs = Long.parseLong(start.get("SlabBytes"));
            long largest = Long.parseLong(start.get("LargestSlabBytes"));
            long displaced = (otherSlabs + largest - 1) / largest * largest;
            assertThat(agentBytes).as("bytes of live 64 KiB buffers under the limit with the agent (%d buffers),"
                    + " %d bytes in other caches' slabs before the fill, displacing %d\n%s", agentLive, otherSlabs,
                    displaced, agent.description())
                    .isGreaterThan(LIMIT - 2L * size - JDK_INTERNAL_SLACK - displaced);
        }

        Map<String, String> before = KeyValues.parse(line(agent, "c1b: counters-before "));
        Map<String, String> after = KeyValues.parse(line(agent, "c1b: counters-after "));
        assertThat(before).as("allocator bean counters read in-process by %s\n%s", agent, agent.description())
                .containsKeys(NO_LEAK_COUNTERS.toArray(String[]::new));
        for (String counter : NO_LEAK_COUNTERS) {
            assertThat(after.get(counter)).as("%s before and after the failed calls of %s\n%s", counter, agent,
                    agent.description()).isEqualTo(before.get(counter));
        }
        assertThat(Long.parseLong(after.get("Fallbacks")) - Long.parseLong(before.get("Fallbacks")))
                .as("the two failed requests, each passed to the JDK once (Fallbacks)").isEqualTo(2);

        log("C1b", jdk, size + " B buffers: JDK alone live=" + plainLive + " fillMillis=" + plainFill.get("fillMillis")
                + " maxAllocationMillis=" + plainFill.get("maxAllocationMillis") + " failedCallMillis="
                + millis(plain, "plain") + "/" + millis(plain, "interrupted") + "; agent live=" + agentLive
                + " fillMillis=" + agentFill.get("fillMillis") + " maxAllocationMillis="
                + agentFill.get("maxAllocationMillis") + " allocationsOver100ms=" + agentFill.get("allocationsOver100ms")
                + " failedCallMillis=" + millis(agent, "plain") + "/" + millis(agent, "interrupted")
                + "; message: " + message(agent, "c1b: plain message=") + "; counters before "
                + line(agent, "c1b: counters-before ").substring("c1b: counters-before ".length())
                + "; " + line(agent, "c1b: released=").substring(5));
    }

    // ---------------------------------------------------------------- C1 (c)

    /**
     * Memory released into kmem4j's caches must not be lost to the JDK's own path: 900 buffers of
     * 60,000 bytes (54 MB in the 64 KiB class, under a 64 MiB limit) allocated and released, then 32
     * buffers of 1 MiB (above the largest size class: the JDK allocates them). The JDK alone completes;
     * with the agent, until this test, the second loop failed after 31 of 40 (80 MiB limit) because the
     * released memory stayed in magazines and depots where the JDK's GC-driven reclaim cannot reach it.
     * Mode {@code same}: one thread does both; {@code other}: a second, still living thread released;
     * {@code dropped}: nothing released, the 900 buffers dropped to GC (before the fix the JDK's path found
     * them collected into kmem4j's chunks, which kept the room: a trial saw 55 of 64 MiB-buffers).
     */
    @ParameterizedTest(name = "{0}")
    @MethodSource("io.kmem4j.it.TestJdks#full")
    void c1cMemoryCachedByKmem4jServesTheJdksOwnPath(Jdk jdk) {
        for (String mode : List.of("same", "other", "dropped")) {
            AppRun plain = AppRun.run(jdk, "c1c-plain-" + mode + "-" + jdk.label(), List.of(MAX_DIRECT_64M), cp(),
                    CACHED_APP, RUN_TIMEOUT, mode);
            AppRun agent = AppRun.run(jdk, "c1c-agent-" + mode + "-" + jdk.label(),
                    List.of(MAX_DIRECT_64M, AppRun.javaagent("summary=true")), cp(), CACHED_APP, RUN_TIMEOUT, mode);
            assertThat(plain.stdoutLine("c1c: ")).as("the JDK alone (%s)\n%s", mode, plain.description())
                    .hasValue("c1c: ok large=32");
            assertThat(agent.stdoutLine("c1c: ")).as("with the agent (%s)\n%s", mode, agent.description())
                    .hasValue("c1c: ok large=32");
            assertThat(agent.summaryCounters().get("fallbacks")).as("the 1 MiB requests went to the JDK")
                    .isEqualTo("32");
            log("C1c", jdk, mode + ": " + agent.summaryCounters());
        }
    }

    // ---------------------------------------------------------------- C2

    /**
     * Ten live 1 MiB buffers (the JDK's) and a thousand live 4 KiB buffers (the slabs'): the JDK's
     * direct pool counts the JDK buffers and kmem4j's chunks, kmem4j's BytesInUse the slab buffers, and
     * nothing is counted twice.
     */
    @ParameterizedTest(name = "{0}")
    @MethodSource("io.kmem4j.it.TestJdks#full")
    void c2OneAccountOfDirectMemory(Jdk jdk) {
        AppRun plain = AppRun.run(jdk, "c2-plain-" + jdk.label(), List.of(), cp(), ACCOUNT_APP, RUN_TIMEOUT);
        AppRun agent = AppRun.run(jdk, "c2-agent-" + jdk.label(), List.of(AppRun.javaagent("summary=true")), cp(),
                ACCOUNT_APP, RUN_TIMEOUT);
        for (AppRun run : List.of(plain, agent)) {
            assertThat(run.exit()).as("exit code of %s\n%s", run, run.description()).isZero();
        }
        long large = 10 * MIB;
        long small = 1000L * 4096;
        Map<String, String> p = KeyValues.parse(line(plain, "c2: poolMemoryUsed="));
        long plainUsed = Long.parseLong(p.get("poolMemoryUsed"));
        assertThat(plainUsed).as("the JDK alone: pool MemoryUsed of %s", plain).isBetween(large + small,
                large + small + JDK_INTERNAL_SLACK);

        Map<String, String> a = KeyValues.parse(line(agent, "c2: poolMemoryUsed="));
        long used = Long.parseLong(a.get("poolMemoryUsed"));
        long capacity = Long.parseLong(a.get("poolTotalCapacity"));
        long count = Long.parseLong(a.get("poolCount"));
        assertThat(a).as("allocator bean figures of %s\n%s", agent, agent.description())
                .containsKeys("bytesReserved", "bytesInUse", "chunks");
        long reserved = Long.parseLong(a.get("bytesReserved"));
        long inUse = Long.parseLong(a.get("bytesInUse"));
        long chunks = Long.parseLong(a.get("chunks"));
        log("C2", jdk, "agent: pool MemoryUsed=" + used + " TotalCapacity=" + capacity + " Count=" + count
                + "; kmem4j BytesReserved=" + reserved + " BytesInUse=" + inUse + " LiveBuffers=" + a.get("liveBuffers")
                + " Chunks=" + chunks + "; 10 MiB + BytesReserved=" + (large + reserved) + " (unexplained "
                + (used - large - reserved) + " B); JDK alone: pool MemoryUsed=" + plainUsed + " Count="
                + p.get("poolCount"));
        assertThat(used).as("pool MemoryUsed >= 10 MiB (JDK buffers) + BytesReserved (chunks): nothing invisible")
                .isGreaterThanOrEqualTo(large + reserved);
        assertThat(used - large - reserved).as("pool MemoryUsed beyond 10 MiB + BytesReserved: slab buffers must not be"
                + " counted a second time (that would be ~%d B)", small).isLessThanOrEqualTo(JDK_INTERNAL_SLACK);
        assertThat(inUse).as("kmem4j BytesInUse: the thousand 4 KiB buffers").isBetween(small, small + JDK_INTERNAL_SLACK);
        assertThat(reserved).as("BytesReserved holds BytesInUse and is within pool MemoryUsed")
                .isGreaterThanOrEqualTo(inUse).isLessThanOrEqualTo(used);
        assertThat(reserved).as("BytesReserved is whole chunks as the pool counts them").isEqualTo(chunks * CHUNK_RESERVATION);
        assertThat(count).as("pool Count: 10 JDK buffers + the chunks").isGreaterThanOrEqualTo(10 + chunks);
        assertThat(capacity).as("pool TotalCapacity").isGreaterThanOrEqualTo(large + reserved);
    }

    // ---------------------------------------------------------------- C6

    /**
     * With {@code -Djdk.nio.maxCachedBufferSize=0} the JDK (17/21) takes a temporary direct buffer for
     * every write of a heap buffer to a channel and frees it with {@code cleaner().clean()}: 10,000 writes
     * of 512 KiB (passed to the JDK) and 10,000 of 1 B..64 KiB (served by the slabs) with no exception,
     * every slab buffer released exactly once, explicitly.
     */
    @ParameterizedTest(name = "{0}")
    @MethodSource("io.kmem4j.it.TestJdks#full")
    void c6TheJdkFreesOurBuffersToo(Jdk jdk) {
        if (jdk.feature() >= 24) {
            log("C6", jdk, "skipped: JDK 24+ no longer allocates its temporary I/O buffers with allocateDirect");
        }
        assumeTrue(jdk.feature() < 24, "JDK 24+ no longer allocates its temporary I/O buffers with allocateDirect");
        List<String> flags = List.of("-Djdk.nio.maxCachedBufferSize=0");
        AppRun plain = AppRun.run(jdk, "c6-plain-" + jdk.label(), flags, cp(), TEMP_APP, RUN_TIMEOUT);
        List<String> agentFlags = new ArrayList<>(flags);
        agentFlags.add(AppRun.javaagent("summary=true"));
        AppRun agent = AppRun.run(jdk, "c6-agent-" + jdk.label(), agentFlags, cp(), TEMP_APP, RUN_TIMEOUT);
        for (AppRun run : List.of(plain, agent)) {
            assertThat(run.exit()).as("exit code of %s\n%s", run, run.description()).isZero();
            assertThat(run.stdout()).as("stdout of %s\n%s", run, run.description())
                    .anyMatch(l -> l.startsWith("c6: ok writes=20000")).noneMatch(l -> l.contains("FAIL"));
        }
        Map<String, String> s = agent.summaryCounters();
        long allocations = count(s, "allocations");
        long frees = count(s, "frees");
        long explicit = count(s, "(explicit");
        long gc = count(s, "gc");
        long live = count(s, "live");
        long fallbacks = count(s, "fallbacks");
        Map<String, String> inProcess = KeyValues.parse(line(agent, "c6: counters "));
        log("C6", jdk, "agent summary allocations=" + allocations + " frees=" + frees + " (explicit=" + explicit + ", gc="
                + gc + ") live=" + live + " fallbacks=" + fallbacks + " bytesReserved=" + s.get("bytesReserved")
                + "; DoubleFrees=" + inProcess.get("DoubleFrees") + "; after the 512 KiB phase: "
                + line(agent, "c6: large ").substring(4));
        assertThat(allocations).as("temporary buffers of 1 B..64 KiB served by the slabs: %s", s)
                .isGreaterThanOrEqualTo(10_000);
        assertThat(fallbacks).as("512 KiB temporary buffers passed to the JDK: %s", s).isGreaterThanOrEqualTo(10_000);
        assertThat(frees).as("frees == allocations - live: %s", s).isEqualTo(allocations - live);
        assertThat(live).as("live slab buffers at exit: %s", s).isLessThanOrEqualTo(16);
        assertThat(explicit).as("released by the JDK's cleaner().clean(), not by GC: %s", s)
                .isGreaterThanOrEqualTo(10_000);
        assertThat(inProcess.get("DoubleFrees")).as("double frees counted by the allocator").isEqualTo("0");
    }

    // ---------------------------------------------------------------- C8

    /**
     * A live view keeps its memory: views of dropped 4 KiB roots still read 0xAB after 20 rounds of
     * {@code System.gc()} and fresh 4 KiB buffers filled with 0xFF; with the agent (also in debug mode,
     * where freed memory is poisoned) as without it.
     */
    @ParameterizedTest(name = "{0}")
    @MethodSource("io.kmem4j.it.TestJdks#full")
    void c8ALiveViewKeepsItsMemory(Jdk jdk) {
        AppRun plain = AppRun.run(jdk, "c8-plain-" + jdk.label(), List.of(), cp(), VIEW_APP, RUN_TIMEOUT);
        AppRun agent = AppRun.run(jdk, "c8-agent-" + jdk.label(), List.of(AppRun.javaagent("summary=true")), cp(),
                VIEW_APP, RUN_TIMEOUT);
        AppRun debug = AppRun.run(jdk, "c8-debug-" + jdk.label(),
                List.of("-Dkmem4j.debug=true", AppRun.javaagent("summary=true")), cp(), VIEW_APP, RUN_TIMEOUT);
        for (AppRun run : List.of(plain, agent, debug)) {
            assertThat(run.exit()).as("exit code of %s\n%s", run, run.description()).isZero();
            assertThat(run.stdout()).as("stdout of %s\n%s", run, run.description())
                    .contains("c8: ok views=7 rounds=20 fresh=640").noneMatch(l -> l.contains("FAIL"));
        }
        for (AppRun run : List.of(agent, debug)) {
            Map<String, String> c = KeyValues.parse(line(run, "c8: counters "));
            assertThat(c).as("allocator bean counters of %s\n%s", run, run.description()).containsKey("GcFrees");
            // the 16 dropped control buffers: GC-driven frees really happened during the run
            assertThat(Long.parseLong(c.get("GcFrees"))).as("GC-driven frees in %s: %s", run, c).isPositive();
            assertThat(Long.parseLong(c.get("LiveBuffers"))).as("live buffers (7 view roots + 640 fresh) in %s", run)
                    .isGreaterThanOrEqualTo(647);
        }
        log("C8", jdk, "views intact with the agent: " + line(agent, "c8: counters ").substring(4)
                + "; debug mode: " + line(debug, "c8: counters ").substring(4));
    }

    // ---------------------------------------------------------------- C12

    /**
     * Thread A allocates 16 KiB buffers, thread B releases them with {@code invokeCleaner}, 200,000 times,
     * plus 900 releases after A has ended; 100 stay held. Nothing lost: the summary shows exactly the
     * held buffers live, the caches of the ended threads are adopted (all remote frees absorbed), and the
     * memory held stays near the peak live set.
     */
    @ParameterizedTest(name = "{0}")
    @MethodSource("io.kmem4j.it.TestJdks#full")
    void c12ReleasesFromOtherThreads(Jdk jdk) {
        AppRun plain = AppRun.run(jdk, "c12-plain-" + jdk.label(), List.of(), cp(), REMOTE_APP, RUN_TIMEOUT);
        AppRun agent = AppRun.run(jdk, "c12-agent-" + jdk.label(), List.of(AppRun.javaagent("summary=true")), cp(),
                REMOTE_APP, RUN_TIMEOUT);
        for (AppRun run : List.of(plain, agent)) {
            assertThat(run.exit()).as("exit code of %s\n%s", run, run.description()).isZero();
            assertThat(run.stdout()).as("stdout of %s\n%s", run, run.description())
                    .contains("c12: ok allocated=201000 released=200900 held=100").noneMatch(l -> l.contains("FAIL"));
        }
        Map<String, String> s = agent.summaryCounters();
        long held = 100;
        long size = 16 * 1024;
        Map<String, String> ended = KeyValues.parse(line(agent, "c12: after-threads-ended "));
        log("C12", jdk, "agent summary allocations=" + s.get("allocations") + " frees=" + s.get("frees") + " live="
                + s.get("live") + " bytesInUse=" + s.get("bytesInUse") + " bytesReserved=" + s.get("bytesReserved")
                + " remoteFreesSent=" + s.get("remoteFreesSent") + " remoteFreesAbsorbed=" + s.get("remoteFreesAbsorbed")
                + " threadCaches=" + s.get("threadCaches") + "; right after the threads: "
                + line(agent, "c12: counters ").substring(5) + "; after they ended: "
                + line(agent, "c12: after-threads-ended ").substring(5));
        // what the program had through the agent before its threads began (the bean reads' own 8 KiB)
        Map<String, String> start = KeyValues.parse(line(agent, BeanReads.AT_START));
        long startAllocations = Long.parseLong(start.get("Allocations"));
        assertThat(count(s, "allocations") - startAllocations).as("allocations: %s, at start %s", s, start)
                .isEqualTo(201_000);
        long startLive = Long.parseLong(start.get("LiveBuffers"));
        long startFrees = startAllocations - startLive;
        assertThat(count(s, "frees") - startFrees).as("frees: %s, at start %s", s, start).isEqualTo(200_900);
        assertThat(count(s, "(explicit") - startFrees).as("explicit frees: %s, at start %s", s, start)
                .isEqualTo(200_900);
        assertThat(count(s, "live") - startLive).as("live at exit == buffers still held: %s, at start %s", s, start)
                .isEqualTo(held);
        assertThat(count(s, "bytesInUse") - Long.parseLong(start.get("BytesInUse")))
                .as("bytesInUse at exit == held * 16 KiB: %s, at start %s", s, start).isEqualTo(held * size);
        assertThat(ended).as("allocator bean after both threads ended\n%s", agent.description())
                .containsKeys("ThreadCaches", "RemoteFreesSent", "RemoteFreesAbsorbed");
        assertThat(ended.get("ThreadCaches")).as("caches of ended threads adopted: %s", ended).isEqualTo("0");
        assertThat(ended.get("RemoteFreesAbsorbed")).as("every remote free absorbed once its owner ended: %s", ended)
                .isEqualTo(ended.get("RemoteFreesSent"));
        // peak live set: 256 queued + 1 in each thread's hands + 1000 late ~ 4.9 chunks of 256 objects; plus
        // two threads' magazines (2 x 2 x 32 rounds) and a full depot (16 x 32): at most 8 chunks
        assertThat(count(s, "bytesReserved")).as("chunk memory held at exit: %s", s)
                .isLessThanOrEqualTo(8 * CHUNK_RESERVATION);
    }

    // ---------------------------------------------------------------- helpers

    private static String line(AppRun run, String prefix) {
        return run.stdoutLine(prefix).orElseThrow(() -> new AssertionError(
                "no stdout line starting with '" + prefix + "' in " + run + "\n" + run.description()));
    }

    /** The rest of the line after {@code prefix} (a message with spaces). */
    private static String message(AppRun run, String prefix) {
        return line(run, prefix).substring(prefix.length());
    }

    private static String millis(AppRun run, String which) {
        return KeyValues.parse(line(run, "c1b: " + which + " millis=")).get("millis");
    }

    private static void log(String kase, Jdk jdk, String text) {
        System.out.println(TestJdks.LOG_PREFIX + kase + " JDK " + jdk.version() + ": " + text);
    }
}
