package io.kmem4j.core;

import jdk.jfr.Category;
import jdk.jfr.DataAmount;
import jdk.jfr.Description;
import jdk.jfr.Enabled;
import jdk.jfr.Event;
import jdk.jfr.Label;
import jdk.jfr.Name;
import jdk.jfr.StackTrace;

/**
 * JDK Flight Recorder events of the allocator (category "kmem4j"), visible in {@code jfr print}
 * and JDK Mission Control. Each is emitted off the fast path, or, for {@link Fallback}, behind
 * {@code shouldCommit()}, which the JIT folds to nothing while the event is disabled.
 *
 * <p>Every site asks {@link #recorder()} first and touches no event class while the JVM's Flight
 * Recorder is not initialized: the first load of a {@code jdk.jfr.Event} subclass brings up JFR's
 * Java side (its metadata, some 100 classes, ASM instrumentation of the event class), which costs
 * about 0.3 s of CPU on JDK 17 and 25 although no recording exists to take the event. A recording
 * (started on the command line, by {@code jcmd JFR.start} or in code) initializes the recorder, and
 * events are emitted from then on; events are only ever recorded by a recording, so none is lost.
 */
final class Events {
    private Events() {
    }

    /**
     * @return true once the JVM's Flight Recorder is initialized (a recording was started at some
     *         point); only then may an event class be touched. One static field read.
     */
    static boolean recorder() {
        return jdk.jfr.FlightRecorder.isInitialized();
    }

    /** A chunk was taken from the JDK's direct-memory budget. */
    @Name("io.kmem4j.ChunkGrow")
    @Label("Chunk Grow")
    @Category("kmem4j")
    @Description("A chunk of off-heap memory was reserved from the JDK's direct-memory budget")
    @StackTrace(false)
    static final class ChunkGrow extends Event {
        @Label("Chunk Size")
        @DataAmount
        long bytes;

        @Label("Chunks After")
        int chunks;
    }

    /** A wholly empty chunk was returned to the JDK. */
    @Name("io.kmem4j.ChunkRelease")
    @Label("Chunk Release")
    @Category("kmem4j")
    @Description("A wholly empty chunk was returned to the operating system and the JDK's budget (trim)")
    @StackTrace(false)
    static final class ChunkRelease extends Event {
        @Label("Chunk Size")
        @DataAmount
        long bytes;

        @Label("Chunks After")
        int chunks;
    }

    /** The direct-memory budget was exhausted while a cache needed a new slab. */
    @Name("io.kmem4j.BudgetPressure")
    @Label("Budget Pressure")
    @Category("kmem4j")
    @Description("No chunk could be reserved: remote frees were absorbed and the allocator trimmed before"
        + " retrying or passing the request to the JDK")
    static final class BudgetPressure extends Event {
        @Label("Cache")
        String cache;

        @Label("Released By Trim")
        @DataAmount
        long releasedBytes;

        @Label("Recovered")
        @Description("true when the retry was served from the slabs, false when the request went to the JDK")
        boolean recovered;
    }

    /** A thread about to grow asked for a collection first ({@code CollectBeforeGrowing}). */
    @Name("io.kmem4j.CollectBeforeGrowing")
    @Label("Collect Before Growing")
    @Category("kmem4j")
    @Description("Reserved memory was about to pass its mark (collectAboveBytes, then twice what survived the last):"
        + " kmem4j ran System.gc() and helped the cleaners it found before adding a chunk")
    static final class CollectBeforeGrowing extends Event {
        @Label("Reserved")
        @DataAmount
        long reservedBytes;

        @Label("In Use Before")
        @DataAmount
        long bytesInUseBefore;

        @Label("In Use After")
        @DataAmount
        long bytesInUseAfter;

        @Label("Java Heap In Use Before")
        @DataAmount
        long heapInUse;
    }

    /** An owner took in a large batch of frees other threads sent it. */
    @Name("io.kmem4j.RemoteFreeBacklog")
    @Label("Remote Free Backlog")
    @Category("kmem4j")
    @Description("An owner thread absorbed more deferred frees at once than the backlog threshold (1024)")
    @StackTrace(false)
    static final class RemoteFreeBacklog extends Event {
        @Label("Frees Absorbed")
        long frees;
    }

    /** A request went to the JDK's own allocation (frequent in some applications: off by default). */
    @Name("io.kmem4j.Fallback")
    @Enabled(false)
    @Label("Fallback To JDK")
    @Category("kmem4j")
    @Description("A request was passed to the JDK's own allocateDirect")
    static final class Fallback extends Event {
        @Label("Capacity")
        @DataAmount
        int capacity;

        @Label("Reason")
        String reason;
    }

    /** An explicit buffer became unreachable without being freed (leak detection on). */
    @Name("io.kmem4j.Leak")
    @Label("Explicit Buffer Leak")
    @Category("kmem4j")
    @Description("An explicit (no cleaner) buffer was collected without free(); its block was given back")
    @StackTrace(false)
    static final class Leak extends Event {
        @Label("Capacity")
        @DataAmount
        int capacity;
    }

    static final long BACKLOG_THRESHOLD = 1024;
}
