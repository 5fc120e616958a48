package io.kmem4j.core;

import static io.kmem4j.core.TestSupport.address;
import static io.kmem4j.core.TestSupport.checkPattern;
import static io.kmem4j.core.TestSupport.writePattern;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowable;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.LongBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.Stream;

import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * Information safety (issue #8, part 4): every kind of buffer that is not one of this allocator's live
 * root buffers, passed to every release path there is at core level, is refused with an
 * {@link IllegalArgumentException} whose message is asserted, or passed to the JDK unchanged (its own
 * cleaner runs, or there is nothing to run); the allocator's counters do not move (but for the
 * counted second {@code free()} of an explicit buffer), {@code checkInvariants()} holds, our buffer is
 * intact, and afterwards 1000 allocations each with a distinct pattern all verify: no byte of one
 * buffer shows in another.
 *
 * <p>Release paths: {@link SlabAllocator#free(ByteBuffer)}, {@code sun.misc.Unsafe.invokeCleaner} and
 * {@code ((DirectBuffer) b).cleaner().clean()} (the JDK's, which run a tracked buffer's release hook),
 * each with "our" buffer of either flavour (tracked and explicit).
 */
class InformationSafetyTest {
    /** Our live buffer: a whole 4096 B object (a class boundary). */
    private static final int OURS = 4096;

    /** The release paths a buffer can be handed to at core level. */
    enum Route { FREE, INVOKE_CLEANER, CLEANER_CLEAN }

    /** What a release path must do with a kind of foreign buffer. */
    enum Expect {
        /** {@code IllegalArgumentException} with the kind's message; nothing changes. */
        REFUSED,
        /** The buffer's own (JDK) cleaner runs; our allocator is not involved. */
        JDK_CLEANER_RUNS,
        /** There is no cleaner to run (views, no-cleaner buffers, a cleaner that already ran): nothing changes. */
        NOTHING,
        /** The other allocator's release hook runs (its buffer goes home); ours is not involved. */
        OTHER_ALLOCATOR_RELEASES,
        /** A second {@code free()} of an explicit buffer: counted in {@code doubleFrees()}, ignored. */
        DOUBLE_FREE_COUNTED
    }

    /** Buffers that are not one of our live root buffers. */
    enum Kind {
        HEAP, JDK_DIRECT, JDK_DIRECT_ZERO_CAPACITY, MAPPED_FILE,
        /**
         * {@code FileChannel.map} of 0 bytes: the JDK gives a buffer at address 0 with no cleaner, which
         * {@code free()} cannot tell from a freed zero-capacity explicit buffer of ours: it counts a double
         * free and changes nothing else.
         */
        MAPPED_EMPTY,
        READ_ONLY_VIEW, SLICE, DUPLICATE, ALIGNED_SLICE, ZERO_CAPACITY_SLICE, LONG_VIEW,
        OTHER_ALLOCATOR, ALREADY_RELEASED,
        /** A root with no cleaner over memory of its own, as JNI {@code NewDirectByteBuffer} makes. */
        NO_CLEANER_FOREIGN,
        /** Such a root over the inside of our buffer (not where an object starts). */
        ALIAS_INSIDE_OURS,
        /** Such a root where our object starts, with a capacity of another size class. */
        ALIAS_OTHER_SIZE_CLASS,
        /** Such a root over an object of our slab that was never handed out. */
        ALIAS_UNALLOCATED_OBJECT;

        boolean isView() {
            return this == READ_ONLY_VIEW || this == SLICE || this == DUPLICATE || this == ALIGNED_SLICE
                || this == ZERO_CAPACITY_SLICE;
        }

        boolean isAlias() {
            return this == NO_CLEANER_FOREIGN || this == ALIAS_INSIDE_OURS || this == ALIAS_OTHER_SIZE_CLASS
                || this == ALIAS_UNALLOCATED_OBJECT;
        }

        /** Routes that accept this kind (a LongBuffer is no ByteBuffer; a heap buffer has no cleaner()). */
        boolean accepts(final Route route) {
            return this == LONG_VIEW ? route == Route.CLEANER_CLEAN : this != HEAP || route != Route.CLEANER_CLEAN;
        }

        Expect expect(final Route route, final boolean tracked) {
            if (this == HEAP || isView()) {
                return route == Route.CLEANER_CLEAN ? Expect.NOTHING : Expect.REFUSED;
            }
            if (this == JDK_DIRECT || this == JDK_DIRECT_ZERO_CAPACITY || this == MAPPED_FILE) {
                return Expect.JDK_CLEANER_RUNS;
            }
            if (this == OTHER_ALLOCATOR && tracked) {
                return Expect.OTHER_ALLOCATOR_RELEASES;
            }
            if (this == ALREADY_RELEASED) {
                return !tracked && route == Route.FREE ? Expect.DOUBLE_FREE_COUNTED : Expect.NOTHING;
            }
            if (this == MAPPED_EMPTY) {
                return route == Route.FREE ? Expect.DOUBLE_FREE_COUNTED : Expect.NOTHING;
            }
            if (this == LONG_VIEW) {
                return Expect.NOTHING;
            }
            // OTHER_ALLOCATOR (explicit) and the no-cleaner roots: no cleaner, and not one of ours
            return route == Route.FREE ? Expect.REFUSED : Expect.NOTHING;
        }

        /** The message of the refusal ({@code free()}'s, or the JDK's {@code invokeCleaner}'s). */
        String message(final Route route) {
            if (this == HEAP) {
                return route == Route.FREE ? "not a direct buffer: java.nio.HeapByteBuffer" : "buffer is non-direct";
            }
            return isView() ? "duplicate or slice" : "not a buffer of this allocator: java.nio.DirectByteBuffer";
        }
    }

    static Stream<Arguments> matrix() {
        final List<Arguments> all = new ArrayList<>();
        for (final Kind kind : Kind.values()) {
            for (final Route route : Route.values()) {
                if (kind.accepts(route)) {
                    all.add(Arguments.of(kind, route, true));
                    all.add(Arguments.of(kind, route, false));
                }
            }
        }
        return all.stream();
    }

    @TempDir
    Path dir;

    /** Our allocator, our live buffer in it, and what a case made. */
    private final class Setup implements AutoCloseable {
        final SlabAllocator a = new SlabAllocator(SlabAllocatorConfig.builder().reapIntervalMillis(60_000).build());
        final boolean tracked;
        ByteBuffer ours;
        SlabAllocator other;
        /** The buffer that took our released buffer's block (ALREADY_RELEASED). */
        ByteBuffer reuser;
        FileChannel channel;
        long foreignMemory;

        Setup(final boolean tracked) {
            this.tracked = tracked;
            ours = alloc(a, OURS);
            writePattern(ours, 1);
        }

        ByteBuffer alloc(final SlabAllocator in, final int capacity) {
            return tracked ? in.allocate(capacity) : in.allocateExplicit(capacity);
        }

        void releaseOurs(final ByteBuffer b) {
            if (tracked) {
                TestSupport.invokeCleaner(b);
            } else {
                a.free(b);
            }
        }

        Object make(final Kind kind) throws IOException {
            switch (kind) {
                case HEAP: return ByteBuffer.allocate(OURS);
                case JDK_DIRECT: return ByteBuffer.allocateDirect(OURS);
                case JDK_DIRECT_ZERO_CAPACITY: return ByteBuffer.allocateDirect(0);
                case MAPPED_FILE:
                    channel = FileChannel.open(dir.resolve("mapped"), StandardOpenOption.CREATE,
                        StandardOpenOption.READ, StandardOpenOption.WRITE);
                    return channel.map(FileChannel.MapMode.READ_WRITE, 0, OURS);
                case MAPPED_EMPTY:
                    channel = FileChannel.open(dir.resolve("empty"), StandardOpenOption.CREATE,
                        StandardOpenOption.READ, StandardOpenOption.WRITE);
                    return channel.map(FileChannel.MapMode.READ_WRITE, 0, 0);
                case READ_ONLY_VIEW: return ours.asReadOnlyBuffer();
                case SLICE: return ours.slice(64, 1024);
                case DUPLICATE: return ours.duplicate();
                case ALIGNED_SLICE: return ours.position(3).alignedSlice(8);
                case ZERO_CAPACITY_SLICE: return ours.slice(OURS, 0);
                case LONG_VIEW: return ours.asLongBuffer();
                case OTHER_ALLOCATOR:
                    other = new SlabAllocator(SlabAllocatorConfig.builder().reapIntervalMillis(60_000).build());
                    return alloc(other, OURS);
                case ALREADY_RELEASED: {
                    final ByteBuffer released = ours;
                    final long at = address(released);
                    releaseOurs(released);
                    ours = null;
                    reuser = alloc(a, OURS);
                    assertThat(address(reuser)).as("precondition: the block was handed out again").isEqualTo(at);
                    writePattern(reuser, 2);
                    return released;
                }
                case NO_CLEANER_FOREIGN:
                    foreignMemory = org.agrona.UnsafeApi.allocateMemory(OURS);
                    return JdkInternals.newDirectBuffer(OURS, foreignMemory, null);
                case ALIAS_INSIDE_OURS: return JdkInternals.newDirectBuffer(OURS - 128, address(ours) + 64, null);
                case ALIAS_OTHER_SIZE_CLASS: return JdkInternals.newDirectBuffer(100, address(ours), null);
                case ALIAS_UNALLOCATED_OBJECT: {
                    final Slab s = a.pages.slabOf(address(ours), new Chunk[1]);
                    final int last = s.objects - 1;
                    assertThat(s.free[last >>> 6] & (1L << last)).as("precondition: %s's last object never handed out", s)
                        .isNotZero();
                    return JdkInternals.newDirectBuffer(OURS, s.base + (long) last * s.objectSize, null);
                }
                default: throw new AssertionError(kind);
            }
        }

        @Override
        public void close() throws IOException {
            try {
                if (ours != null) {
                    releaseOurs(ours);
                }
                if (reuser != null) {
                    releaseOurs(reuser);
                }
                final AllocatorStats s = a.stats();
                assertThat(s.liveBuffers()).isZero();
                assertThat(s.hookFailures()).isZero();
                a.checkInvariants();
            } finally {
                a.close();
                if (other != null) {
                    other.close();
                }
                if (channel != null) {
                    channel.close();
                }
                if (foreignMemory != 0) {
                    org.agrona.UnsafeApi.freeMemory(foreignMemory);
                }
            }
        }
    }

    @ParameterizedTest(name = "{0} via {1}, our buffer tracked={2}")
    @MethodSource("matrix")
    void foreignBuffersAreRefusedOrPassedToTheJdkAndNeverTouchThePool(final Kind kind, final Route route,
                                                                       final boolean tracked) throws Exception {
        try (Setup s = new Setup(tracked)) {
            final Object foreign = s.make(kind);
            final AllocatorStats before = s.a.stats();
            final AllocatorStats otherBefore = s.other == null ? null : s.other.stats();
            final Object cleaner = kind == Kind.HEAP ? null : TestSupport.cleanerOf(foreign);

            final Throwable thrown = catchThrowable(() -> release(s.a, route, foreign));

            final Expect expect = kind.expect(route, tracked);
            if (expect == Expect.REFUSED) {
                assertThat(thrown).isInstanceOf(IllegalArgumentException.class)
                    .hasMessageStartingWith(kind.message(route));
            } else {
                assertThat(thrown).as("%s of %s via %s", expect, kind, route).isNull();
            }
            switch (expect) {
                case JDK_CLEANER_RUNS -> assertThat(AllocatorModelTest.ModelRun.cleaned((ByteBuffer) foreign))
                    .as("the JDK's own cleaner of %s ran", kind).isTrue();
                case NOTHING -> {
                    if (route == Route.CLEANER_CLEAN && kind != Kind.ALREADY_RELEASED) {
                        assertThat(cleaner).as("%s has no cleaner to run", kind).isNull();
                    }
                }
                case OTHER_ALLOCATOR_RELEASES -> {
                    final AllocatorStats o = s.other.stats();
                    assertThat(o.explicitFrees()).isEqualTo(otherBefore.explicitFrees() + 1);
                    assertThat(o.liveBuffers()).isZero();
                }
                default -> {
                }
            }
            if (s.other != null && expect != Expect.OTHER_ALLOCATOR_RELEASES) {
                assertThat(TestSupport.statsDiff(otherBefore, s.other.stats())).as("the other allocator's counters that moved")
                    .isEmpty();
                s.other.free((ByteBuffer) foreign); // (explicit) it is still live there
            }

            final AllocatorStats after = s.a.stats();
            assertThat(TestSupport.statsDiff(before, after, "doubleFrees")).as("our counters that moved").isEmpty();
            assertThat(after.doubleFrees()).as("doubleFrees")
                .isEqualTo(before.doubleFrees() + (expect == Expect.DOUBLE_FREE_COUNTED ? 1 : 0));
            s.a.checkInvariants();
            if (s.ours != null) {
                assertThat(checkPattern(s.ours.clear(), 1)).as("our buffer intact").isEqualTo(-1);
            }
            if (s.reuser != null) {
                assertThat(checkPattern(s.reuser, 2)).as("the buffer now on the released block intact").isEqualTo(-1);
            }
            TestSupport.assertDistinctPatterns(s.a, 1000, kind.ordinal() * 31L + route.ordinal());
            s.a.checkInvariants();
        }
    }

    private static void release(final SlabAllocator a, final Route route, final Object buffer) {
        switch (route) {
            case FREE -> a.free((ByteBuffer) buffer);
            case INVOKE_CLEANER -> TestSupport.invokeCleaner((ByteBuffer) buffer);
            case CLEANER_CLEAN -> TestSupport.cleanerClean(buffer);
            default -> throw new AssertionError(route);
        }
    }

    /** The long view of our buffer is a view: it has no cleaner and keeps the root alive. */
    @ParameterizedTest(name = "our buffer tracked={0}")
    @org.junit.jupiter.params.provider.ValueSource(booleans = {true, false})
    void aLongViewOfOursHasNoCleanerAndPointsAtItsRoot(final boolean tracked) throws Exception {
        try (Setup s = new Setup(tracked)) {
            final LongBuffer v = (LongBuffer) s.make(Kind.LONG_VIEW);
            assertThat(TestSupport.cleanerOf(v)).isNull();
            assertThat(JdkInternals.attachment(s.ours)).as("our buffer is a root").isNull();
            final java.lang.reflect.Method attachment = v.getClass().getMethod("attachment");
            attachment.setAccessible(true);
            assertThat(attachment.invoke(v)).as("the view's attachment is our root").isSameAs(s.ours);
        }
    }
}
