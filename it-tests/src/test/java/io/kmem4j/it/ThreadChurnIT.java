package io.kmem4j.it;

import static io.kmem4j.it.JmxClient.ALLOCATOR;
import static org.assertj.core.api.Assertions.assertThat;

import io.kmem4j.it.apps.ThreadChurnApp;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import javax.management.ObjectName;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * Threads that die (field case C5) in a forked JVM with the agent and its default configuration
 * (see {@link ThreadChurnApp}): (a) 1000 threads in turn allocate ten 16 KiB buffers, release nine
 * and hand one to a long-lived holder, which releases them after their owners ended; (b) 10,000
 * {@code ForkJoinPool.commonPool()} tasks (parallelism 4) allocate and release 4 KiB.
 *
 * <p>Asserted: after 250, 500 and 1000 threads, once the reaper adopted the caches of the ended
 * threads, one thread cache is left (the holder's) and {@code BytesReserved} does not grow with the
 * number of threads ever created (at 500 and 1000 at most one chunk above the figure at 250); the
 * commonPool tasks create one cache per worker, not per task; every buffer released after its owner
 * died came back ({@code ActiveObjects} 0, {@code Frees == Allocations} in its size class); after
 * {@code trim} over JMX the 16 KiB class, whose threads are all gone, holds no slab, and what is
 * left is pinned by live threads only (each live thread cache holds at most two magazines and one
 * frozen slab per class). The figures right after each checkpoint, before the reaper ran, are
 * printed: they show what the caches of ended-but-not-yet-adopted threads hold meanwhile.
 */
@Timeout(value = 3, unit = TimeUnit.MINUTES)
class ThreadChurnIT {

    private static final String APP = "io.kmem4j.it.apps.ThreadChurnApp";
    private static final int PARALLELISM = 4;
    private static final ObjectName CHURN_CACHE = JmxClient.objectName("kmem4j:type=SlabCache,name=kmem4j-16384");
    private static final ObjectName TASK_CACHE = JmxClient.objectName("kmem4j:type=SlabCache,name=kmem4j-4096");
    private static final String[] CACHE_FIGURES = {"Allocations", "Frees", "ActiveObjects", "Slabs", "PagesPerSlab"};
    private static final String[] ALLOCATOR_FIGURES = {"BytesReserved", "Chunks", "ThreadCaches", "LiveBuffers",
        "Allocations", "Frees", "Fallbacks", "DoubleFrees"};
    private static final Duration RUN_TIMEOUT = Duration.ofSeconds(90);
    /** Longer than the age of the beans' shared snapshot (200 ms). */
    private static final long SNAPSHOT_AGE_MILLIS = 300;

    @ParameterizedTest(name = "{0}")
    @MethodSource("io.kmem4j.it.TestJdks#full")
    void memoryOfEndedThreadsComesBackAndDoesNotGrowWithThreadsEverCreated(Jdk jdk) {
        try (ForkedJvm app = ForkedJvm.builder(jdk, "churn-" + jdk.label())
                .jvmArgs("-Djava.util.concurrent.ForkJoinPool.common.parallelism=" + PARALLELISM,
                        AppRun.javaagent("summary=true"))
                .mainClass(AppRun.classpath(AppRun.appClasses()), APP)
                .start()) {
            app.awaitLine(ForkedJvm.Channel.STDOUT, "'churn: holding' or a failure",
                    l -> l.startsWith("churn: holding") || l.startsWith("churn: FAIL"), RUN_TIMEOUT);
            assertThat(app.stdoutLines()).as("stdout of %s\n%s", app, app.describe())
                    .anyMatch(l -> l.startsWith("churn: ok threads=1000 handedOff=1000 releasedByHolder=1000 tasks=10000"))
                    .noneMatch(l -> l.contains("FAIL"));

            List<String> figures = new ArrayList<>();
            Long reservedAt250 = null;
            for (String line : app.stdoutLines()) {
                if (!line.startsWith("churn: threads=")) {
                    continue;
                }
                Map<String, String> adopted = KeyValues.parse(line.substring(line.indexOf(" adopted ")));
                Map<String, String> raw = KeyValues.parse(line.substring(line.indexOf(" raw "), line.indexOf(" adopted ")));
                int threads = Integer.parseInt(KeyValues.parse(line).get("threads"));
                long reserved = Long.parseLong(adopted.get("BytesReserved"));
                long chunks = Long.parseLong(adopted.get("Chunks"));
                assertThat(Long.parseLong(adopted.get("ThreadCaches"))).as("thread caches after %d threads ended and"
                        + " were adopted (the holder's is left): %s", threads, line).isLessThanOrEqualTo(1);
                assertThat(adopted.get("LiveBuffers")).as("live buffers after %d threads: %s", threads, line)
                        .isEqualTo("0");
                if (reservedAt250 == null) {
                    reservedAt250 = reserved;
                } else {
                    long slack = holderSlack(app, Long.parseLong(KeyValues.parse(line).get("pagesPerSlab16k")));
                    assertThat(reserved).as("BytesReserved after %d threads vs %d after 250, plus what the holder's"
                            + " magazines and the depot may hold (%d): %s", threads, reservedAt250, slack, line)
                            .isLessThanOrEqualTo(reservedAt250 + slack);
                }
                figures.add(threads + " threads: " + reserved + " B in " + chunks + " chunks, "
                        + KeyValues.parse(line).get("slabs16k") + " slabs of 16 KiB (before the reaper: "
                        + raw.get("BytesReserved") + " B, " + raw.get("ThreadCaches") + " thread caches)");
            }
            assertThat(figures).as("checkpoints in\n%s", app.describe()).hasSize(3);

            Map<String, String> tasks = KeyValues.parse(app.stdoutLines().stream().filter(l -> l.startsWith("churn: tasks="))
                    .findFirst().orElseThrow(() -> new AssertionError("no 'churn: tasks=' line\n" + app.describe())));
            assertThat(Integer.parseInt(tasks.get("threads"))).as("threads that ran the tasks: %s", tasks)
                    .isLessThanOrEqualTo(PARALLELISM + 1);
            assertThat(Long.parseLong(tasks.get("ThreadCaches"))).as("thread caches after 10,000 commonPool tasks"
                    + " (workers, the main thread if it helped, the holder if not yet adopted): %s", tasks)
                    .isLessThanOrEqualTo(PARALLELISM + 2);

            try (JmxClient jmx = JmxClient.attach(app.pid(), app + " on " + jdk, RUN_TIMEOUT)) {
                Map<String, Long> churn = jmx.readLongs(CHURN_CACHE, CACHE_FIGURES);
                Map<String, Long> task = jmx.readLongs(TASK_CACHE, CACHE_FIGURES);
                assertThat(churn).as("16 KiB class: 1000 x 10 allocated, all released, 1000 of them after their"
                        + " owner died").containsEntry("Allocations", 10_000L).containsEntry("Frees", 10_000L)
                        .containsEntry("ActiveObjects", 0L);
                assertThat(task).as("4 KiB class: the commonPool tasks").containsEntry("Allocations", 10_000L)
                        .containsEntry("Frees", 10_000L).containsEntry("ActiveObjects", 0L);
                Map<String, Long> beforeTrim = jmx.readLongs(ALLOCATOR, ALLOCATOR_FIGURES);
                jmx.invoke(ALLOCATOR, "trim");
                Thread.sleep(SNAPSHOT_AGE_MILLIS);
                Map<String, Long> afterTrim = jmx.readLongs(ALLOCATOR, ALLOCATOR_FIGURES);
                Map<String, Long> churnAfter = jmx.readLongs(CHURN_CACHE, CACHE_FIGURES);
                Map<String, Long> taskAfter = jmx.readLongs(TASK_CACHE, CACHE_FIGURES);
                assertThat(afterTrim.get("BytesReserved")).as("after trim (%s) vs before (%s)", afterTrim, beforeTrim)
                        .isLessThanOrEqualTo(beforeTrim.get("BytesReserved"));
                assertThat(churnAfter.get("Slabs")).as("slabs of the 16 KiB class after trim (its threads"
                        + " are all gone): %s", churnAfter).isZero();
                long liveCaches = afterTrim.get("ThreadCaches");
                String config = (String) jmx.connection().getAttribute(ALLOCATOR, "Configuration");
                long rounds = new CacheBound(config).setting("magazineRounds");
                assertThat(taskAfter.get("Slabs")).as("slabs of the 4 KiB class after trim: at most two"
                        + " magazines of %d rounds and a frozen slab for each of the %d live thread caches: %s",
                        rounds, liveCaches, taskAfter).isLessThanOrEqualTo(liveCaches * (2 * rounds + 1));
                log(jdk, "after " + String.join("; ", figures) + "; commonPool " + tasks + "; before trim "
                        + beforeTrim + "; after trim " + afterTrim
                        + ", 16 KiB class " + churnAfter + ", 4 KiB class " + taskAfter);
            } catch (javax.management.JMException | java.io.IOException e) {
                throw new AssertionError("JMX read of the Configuration of " + app + ": " + e, e);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new IllegalStateException(e);
            }
            app.closeStdin();
            assertThat(app.waitForExit(Duration.ofSeconds(30))).as("exit code of %s\n%s", app, app.describe()).isZero();
        }
    }

    /**
     * Whole chunks that the configured caches of the one live thread of the 16 KiB class (the
     * holder: two magazines and a frozen slab) and the class's depot and an empty slab may hold, as
     * {@link CacheBound} counts them: they may fill or empty between two checkpoints.
     */
    private static long holderSlack(ForkedJvm app, long pagesPerSlab) {
        String config = app.stdoutLines().stream().filter(l -> l.startsWith("churn: config ")).findFirst()
                .orElseThrow(() -> new AssertionError("no config line\n" + app.describe())).substring("churn: config ".length());
        CacheBound bound = new CacheBound(config).sizeClass(ThreadChurnApp.SIZE, pagesPerSlab, 1);
        long chunks = (bound.cachesBytes() + bound.chunkSizeBytes() - 1) / bound.chunkSizeBytes();
        return chunks * bound.chunkReservation();
    }

    private static void log(Jdk jdk, String text) {
        System.out.println(TestJdks.LOG_PREFIX + "C5 JDK " + jdk.version() + ": " + text);
    }
}
