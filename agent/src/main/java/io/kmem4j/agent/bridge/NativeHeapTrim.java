package io.kmem4j.agent.bridge;

import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.LongAdder;
import java.util.concurrent.locks.ReentrantLock;

import io.kmem4j.agent.log.AgentLog;
import io.kmem4j.core.SlabAllocator;

/**
 * Gives the C heap back to the operating system after kmem4j released chunks ({@code trimNativeHeap},
 * default true): the JVM's own {@code System.trim_native_heap} diagnostic command (glibc's
 * {@code malloc_trim(0)}, JDK 17.0.9+, 21+; the same as {@code jcmd <pid> System.trim_native_heap}),
 * called through the {@code com.sun.management:type=DiagnosticCommand} bean.
 *
 * <p>Why: chunks come from {@code Unsafe.allocateMemory} ({@code malloc}). Once glibc has freed one
 * chunk it raises its mmap threshold to that size, so later chunks come from its arenas, and memory
 * freed inside an arena stays resident: after a burst, kmem4j released 83 of 84 chunks and the
 * server's RSS stayed at 2.4× its size before the burst (JDK 25, two event loops; Netty's own
 * allocators the same). A trim hands those free pages back ({@code madvise(MADV_DONTNEED)}).
 *
 * <p>When: at the start of a reaper pass of a watched allocator, when the watched allocators together
 * released at least {@value #MIN_RELEASED_BYTES} bytes of chunks since the last trim, and at most once
 * per {@value #MIN_INTERVAL_MILLIS} ms. A trim walks glibc's arenas under their locks (a few ms for a
 * heap of hundreds of MB), and the first call looks up the platform MBean server (which reads cgroup
 * files with temporary direct buffers): it runs on the reaper thread, or on a caller of
 * {@code trim()} or {@code close()}, never inside an application's allocation that relieves the direct-memory budget
 * ({@link SlabAllocator#onReapOffAllocation}). Where the command does not exist (another
 * OS or C library: the JVM does not register it), the first try logs that at debug level and trimming
 * stops.
 *
 * <p>Threads: {@link #watch} any; {@link #run} from reaper passes, which may overlap (one trims, the
 * others return).
 */
public final class NativeHeapTrim implements Runnable {
    static final long MIN_RELEASED_BYTES = 8L * 1024 * 1024;
    static final long MIN_INTERVAL_MILLIS = 2_000;
    private static final String BEAN = "com.sun.management:type=DiagnosticCommand";
    private static final String OPERATION = "systemTrimNativeHeap";

    /** The agent's: set from {@code trimNativeHeap} in premain, before any allocator is built. */
    private static volatile NativeHeapTrim agent;

    private final List<SlabAllocator> watched = new CopyOnWriteArrayList<>();
    private final ReentrantLock lock = new ReentrantLock();
    private final Trimmer trimmer;
    /** Trims done. */
    final LongAdder trims = new LongAdder();
    // under lock
    private long releasedAtLastTrim;
    private long lastTrimNanos = System.nanoTime() - MIN_INTERVAL_MILLIS * 1_000_000L;
    private boolean off;

    /** What a trim does (tests replace the diagnostic command). */
    interface Trimmer {
        /** @return the command's output; throws when the command is not there */
        String trim() throws Exception;
    }

    /** @param trimmer what a trim does; {@code null}: the JVM's {@code System.trim_native_heap} */
    NativeHeapTrim(final Trimmer trimmer) {
        this.trimmer = trimmer;
    }

    /** @param on {@code trimNativeHeap}: the agent's allocators are watched from now on, or not */
    public static void configure(final boolean on) {
        agent = on ? new NativeHeapTrim(null) : null;
    }

    /** Watches one of the agent's allocators (the one behind {@code allocateDirect}, the Netty one), if configured. */
    public static void watchForAgent(final SlabAllocator allocator) {
        final NativeHeapTrim t = agent;
        if (t != null) {
            t.watch(allocator);
        }
    }

    void watch(final SlabAllocator allocator) {
        watched.add(allocator);
        allocator.onReapOffAllocation(this); // never in an application's allocateDirect (see the class comment)
    }

    @Override
    public void run() {
        if (!lock.tryLock()) {
            return; // another pass is deciding or trimming
        }
        try {
            if (off) {
                return;
            }
            long released = 0;
            for (final SlabAllocator a : watched) {
                released += a.stats().chunksReleased() * a.config().chunkSizeBytes();
            }
            final long now = System.nanoTime();
            if (released - releasedAtLastTrim < MIN_RELEASED_BYTES
                || now - lastTrimNanos < MIN_INTERVAL_MILLIS * 1_000_000L) {
                return;
            }
            releasedAtLastTrim = released;
            lastTrimNanos = now;
            final String out;
            try {
                out = trimmer != null ? trimmer.trim() : diagnosticCommand(); // (no lambda spun in premain)
            } catch (final Exception notThere) {
                off = true;
                AgentLog.get(NativeHeapTrim.class).debug("no trimming of the C heap after releasing chunks: {}",
                    notThere.toString());
                return;
            }
            trims.increment();
            AgentLog.get(NativeHeapTrim.class).debug("C heap trimmed after kmem4j released chunks: {}",
                out == null ? "" : out.trim());
        } finally {
            lock.unlock();
        }
    }

    /** {@code System.trim_native_heap} through the platform MBean server. */
    private static String diagnosticCommand() throws Exception {
        final Object out = java.lang.management.ManagementFactory.getPlatformMBeanServer().invoke(
            new javax.management.ObjectName(BEAN), OPERATION, new Object[] {new String[0]},
            new String[] {String[].class.getName()});
        return String.valueOf(out);
    }
}
