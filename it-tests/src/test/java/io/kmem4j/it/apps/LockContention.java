package io.kmem4j.it.apps;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.function.Predicate;
import jdk.jfr.Recording;
import jdk.jfr.consumer.RecordedEvent;
import jdk.jfr.consumer.RecordedFrame;
import jdk.jfr.consumer.RecordedStackTrace;
import jdk.jfr.consumer.RecordingFile;

/**
 * Every contended lock acquisition of a run, recorded by JDK Flight Recorder with no threshold:
 * {@code jdk.JavaMonitorEnter} (a thread BLOCKED entering a {@code synchronized} monitor another
 * thread holds) and {@code jdk.ThreadPark} (a thread WAITING or TIMED_WAITING in
 * {@code LockSupport.park}, which is how a {@code java.util.concurrent} lock waits), each with its
 * stack trace. Unlike sampling thread states, nothing is missed: an uncontended acquisition records
 * nothing, every contended one records one event.
 *
 * <p>Each event is put in one {@link Category} by the frame that took the lock: the top frame for a
 * monitor, the caller of {@code lock()} / {@code tryLock(..)} for a park.
 * <ul>
 *   <li>{@link Category#KMEM4J_GLOBAL}: a monitor taken in kmem4j code (all of kmem4j's monitors are
 *       allocator-wide: the thread-cache registry, the reaper, the cache-id table, the agent's log
 *       set-up), or a lock taken in {@code PageHeap} (the chunk grow serialiser and grow lock), or a
 *       lock taken anywhere else in kmem4j that this class does not know;</li>
 *   <li>{@link Category#KMEM4J_CACHE}: a {@code java.util.concurrent} lock taken in one of the
 *       classes of allocator-core that take {@code SlabCache.lock}, one per size class, and no other
 *       such lock ({@link #CACHE_LOCK_TAKERS});</li>
 *   <li>{@link Category#JDK_CLEANER}: the monitor of {@code jdk.internal.ref.Cleaner}, whose
 *       {@code add} (every new {@code DirectByteBuffer}, ours included) and {@code remove} (every
 *       clean) are {@code static synchronized} on JDK 17..25, with or without kmem4j; on 26+ that of
 *       {@code java.nio.BufferCleaner}'s one static {@code CleanerList} ({@code insert} and {@code remove}
 *       are {@code synchronized}, JDK-8344332);</li>
 *   <li>{@link Category#JDK_OTHER}: any other lock taken under {@code allocateDirect} or
 *       {@code invokeCleaner} (the site says which, and the kmem4j frame it was reached through);</li>
 *   <li>{@link Category#OTHER}: the rest (the program's own latches and queues).</li>
 * </ul>
 * "kmem4j code" is any frame of {@code io.kmem4j.core}, {@code io.kmem4j.agent} or
 * {@code io.kmem4j.shaded}.
 */
public final class LockContention {

    /**
     * The classes of allocator-core whose only {@code java.util.concurrent} lock is a cache's
     * {@code SlabCache.lock} (the page heap's locks are taken in {@code PageHeap}: global).
     */
    static final java.util.Set<String> CACHE_LOCK_TAKERS = java.util.Set.of("SlabCache", "Refill", "SharedTier",
            "ThreadCache", "Reaper", "RemoteFrees", "Accounting");

    /** Where a contended acquisition happened. */
    public enum Category { KMEM4J_GLOBAL, KMEM4J_CACHE, JDK_CLEANER, JDK_OTHER, OTHER }

    /**
     * One contended acquisition.
     *
     * @param thread   the thread that waited
     * @param kind     {@code monitor} or {@code park}
     * @param category see the class comment
     * @param site     the frame that took the lock, {@code Class.method:line}
     * @param nanos    how long it waited
     */
    public record Event(String thread, String kind, Category category, String site, long nanos) {
    }

    private static final String MONITOR_ENTER = "jdk.JavaMonitorEnter";
    private static final String PARK = "jdk.ThreadPark";

    private final Recording recording;

    private LockContention(Recording recording) {
        this.recording = recording;
    }

    /** Starts recording contended monitor entries and parks, with stack traces and no threshold. */
    public static LockContention start() {
        Recording r = new Recording();
        r.setName("kmem4j-it-lock-contention");
        r.enable(MONITOR_ENTER).withThreshold(Duration.ZERO).withStackTrace();
        r.enable(PARK).withThreshold(Duration.ZERO).withStackTrace();
        r.setToDisk(true);
        r.start();
        return new LockContention(r);
    }

    /** Stops the recording and returns the events of threads whose name {@code threads} accepts. */
    public List<Event> stop(Predicate<String> threads) throws IOException {
        recording.stop();
        Path file = Files.createTempFile("kmem4j-it-locks", ".jfr");
        try {
            recording.dump(file);
            recording.close();
            List<Event> events = new ArrayList<>();
            for (RecordedEvent e : RecordingFile.readAllEvents(file)) {
                String type = e.getEventType().getName();
                String thread = e.getThread() == null ? null : e.getThread().getJavaName();
                // any recording also gets the events other code emits (kmem4j's own, for one)
                if ((type.equals(MONITOR_ENTER) || type.equals(PARK)) && thread != null && threads.test(thread)) {
                    events.add(classify(e, thread));
                }
            }
            return events;
        } finally {
            Files.deleteIfExists(file);
        }
    }

    /** Counts by category (every category present, zero if none). */
    public static Map<Category, Long> countByCategory(List<Event> events) {
        Map<Category, Long> counts = new TreeMap<>();
        for (Category c : Category.values()) {
            counts.put(c, 0L);
        }
        events.forEach(e -> counts.merge(e.category(), 1L, Long::sum));
        return counts;
    }

    /** {@code category|kind|site} -> count, for the report. */
    public static Map<String, Long> countBySite(List<Event> events) {
        Map<String, Long> counts = new TreeMap<>();
        events.forEach(e -> counts.merge(e.category() + "|" + e.kind() + "|" + e.site(), 1L, Long::sum));
        return counts;
    }

    private static Event classify(RecordedEvent e, String thread) {
        boolean monitor = e.getEventType().getName().equals(MONITOR_ENTER);
        String kind = monitor ? "monitor" : "park";
        long nanos = e.getDuration().toNanos();
        RecordedStackTrace stack = e.getStackTrace();
        List<RecordedFrame> frames = stack == null ? List.of() : stack.getFrames();
        if (frames.isEmpty()) {
            return new Event(thread, kind, Category.OTHER, "?", nanos);
        }
        // the frame that took the lock: the top one for a monitor, the caller of the lock for a park
        RecordedFrame taker = monitor ? frames.get(0) : firstOutsideLocks(frames);
        String type = typeOf(taker);
        if (isKmem4j(type)) {
            boolean cacheLock = !monitor && type.startsWith("io.kmem4j.core.")
                    && CACHE_LOCK_TAKERS.contains(type.substring("io.kmem4j.core.".length()));
            return new Event(thread, kind, cacheLock ? Category.KMEM4J_CACHE : Category.KMEM4J_GLOBAL, site(taker), nanos);
        }
        if (type.equals("jdk.internal.ref.Cleaner") || type.startsWith("java.nio.BufferCleaner")) {
            return new Event(thread, kind, Category.JDK_CLEANER, site(taker), nanos);
        }
        boolean allocationPath = frames.stream().anyMatch(f ->
                typeOf(f).equals("java.nio.ByteBuffer") && method(f).equals("allocateDirect")
                        || typeOf(f).equals("sun.misc.Unsafe") && method(f).equals("invokeCleaner"));
        String via = frames.stream().filter(f -> isKmem4j(typeOf(f))).findFirst().map(f -> " via " + site(f)).orElse("");
        return new Event(thread, kind, allocationPath ? Category.JDK_OTHER : Category.OTHER, site(taker) + via, nanos);
    }

    /** The first frame that is not part of parking itself (LockSupport, AQS, Unsafe.park). */
    private static RecordedFrame firstOutsideLocks(List<RecordedFrame> frames) {
        for (RecordedFrame f : frames) {
            String type = typeOf(f);
            if (!type.startsWith("java.util.concurrent.locks.") && !type.equals("jdk.internal.misc.Unsafe")) {
                return f;
            }
        }
        return frames.get(0);
    }

    private static boolean isKmem4j(String type) {
        return type.startsWith("io.kmem4j.core.") || type.startsWith("io.kmem4j.agent.")
                || type.startsWith("io.kmem4j.shaded.");
    }

    private static String typeOf(RecordedFrame f) {
        return f.getMethod() == null ? "?" : f.getMethod().getType().getName();
    }

    private static String method(RecordedFrame f) {
        return f.getMethod() == null ? "?" : f.getMethod().getName();
    }

    private static String site(RecordedFrame f) {
        return typeOf(f) + "." + method(f) + ":" + f.getLineNumber();
    }
}
