package io.kmem4j.core;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.IOException;
import java.lang.reflect.Field;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.List;

import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.Combinators;
import net.jqwik.api.EdgeCasesMode;
import net.jqwik.api.Example;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;
import net.jqwik.api.RandomDistribution;
import net.jqwik.api.ShrinkingMode;
import net.jqwik.api.Tuple;

/**
 * Stateful property test: random sequences of allocator actions are run against a simple reference
 * model, and after every action every counter of {@link AllocatorStats} the model predicts
 * (allocations, frees, live buffers, bytes in use, double frees, fallbacks) is compared, every live
 * buffer's identity pattern is verified and {@code checkInvariants()} must hold.
 *
 * <p>Actions: allocate (size, flavour), free, free twice, free a stale buffer (released earlier, its
 * block perhaps serving another buffer now), free a foreign buffer (JDK roots including zero-capacity
 * and {@code FileChannel.map}ped ones are passed to their own cleaner; heap buffers, views of ours or
 * of the JDK's, another allocator's explicit buffers and no-cleaner roots over foreign memory or over
 * ours are refused or find nothing to run), each release through {@code free()},
 * {@code Unsafe.invokeCleaner} or {@code cleaner().clean()}; trim, reap, and "thread exit" (some
 * actions on a fresh thread that then ends, its cache adopted by {@code reap()} at once or only later,
 * so releases of its buffers meanwhile are deferred to a dead owner). Small configurations (magazine
 * rounds 1..4, depot 0..2, no retained chunk) are mixed with the defaults so the slow paths are taken.
 *
 * <p>Each sequence runs on a fresh thread that ends before the final checks, so the allocator can be
 * emptied completely: reap, invariants, trim, and no slab or chunk may be left.
 *
 * <p>The reference model lives in {@link ModelRun}, independent of jqwik. The {@code @Example} methods
 * replay fixed sequences and sequences jqwik once shrank a failure to (jqwik's examples, not JUnit's
 * {@code @Test}: Surefire's XML report keeps only one engine's results for a class).
 */
class AllocatorModelTest {
    private static final int MAX_CLASS = 64 << 10;

    // ------------------------------------------------------------------------------ actions

    /** One action of a generated program. */
    sealed interface Op permits Alloc, Free, FreeTwice, FreeStale, FreeForeign, Trim, Reap, ThreadExit {
    }

    /** Allocates {@code size} bytes, tracked ({@code allocate}) or explicit ({@code allocateExplicit}). */
    record Alloc(int size, boolean tracked) implements Op {
    }

    /** How a buffer is released: {@code free()}, {@code Unsafe.invokeCleaner}, {@code cleaner().clean()}. */
    enum Via { FREE, INVOKE_CLEANER, CLEANER_CLEAN }

    /** Releases live buffer {@code pick % live} (the JDK's paths on an explicit buffer are no-ops: no cleaner). */
    record Free(int pick, Via via) implements Op {
    }

    /** Releases live buffer {@code pick % live} twice (explicit buffers with {@code free()} both times). */
    record FreeTwice(int pick, Via via) implements Op {
    }

    /**
     * Releases again a buffer of ours released earlier (its block may serve another buffer by now):
     * a no-op, counted as a double free for an explicit slab buffer passed to {@code free()}.
     */
    record FreeStale(int pick, Via via) implements Op {
    }

    /** Kinds of buffers that are not one of our live root buffers. */
    enum Foreign {
        /** {@code ByteBuffer.allocateDirect}: {@code free()} runs its JDK cleaner. */
        JDK_ROOT,
        /** A heap buffer: "not a direct buffer". */
        HEAP,
        /** {@code slice()} of a live buffer of ours: "duplicate or slice". */
        SLICE_OF_OURS,
        /** {@code duplicate()} of a live buffer of ours: "duplicate or slice". */
        DUPLICATE_OF_OURS,
        /** {@code asReadOnlyBuffer()} of a live buffer of ours: "duplicate or slice". */
        READ_ONLY_OF_OURS,
        /** {@code slice()} of a JDK direct buffer: "duplicate or slice". */
        SLICE_OF_JDK,
        /** A root direct buffer without cleaner over foreign memory: "not a buffer of this allocator". */
        NO_CLEANER_FOREIGN,
        /** {@code ByteBuffer.allocateDirect(0)}: a JDK root with a cleaner. */
        JDK_ZERO_CAPACITY,
        /** {@code FileChannel.map} of a temporary file: the JDK's unmapper runs. */
        MAPPED_FILE,
        /** {@code FileChannel.map} of 0 bytes: address 0, no cleaner; {@code free()} counts a double free. */
        MAPPED_EMPTY,
        /** {@code alignedSlice(8)} of a live buffer of ours: "duplicate or slice". */
        ALIGNED_SLICE_OF_OURS,
        /** A zero-capacity slice at the end of a live buffer of ours: "duplicate or slice". */
        ZERO_CAPACITY_SLICE_OF_OURS,
        /** {@code asLongBuffer()} of a live buffer of ours: no cleaner (only {@code cleaner()} applies). */
        LONG_VIEW_OF_OURS,
        /** A buffer of another allocator: its own hook runs (tracked), or "not a buffer of this allocator". */
        OTHER_ALLOCATOR,
        /** A no-cleaner root over the inside of a live buffer of ours: "not a buffer of this allocator". */
        ALIAS_INSIDE_OURS,
        /** A no-cleaner root at a live buffer of ours with another class's capacity: refused likewise. */
        ALIAS_OTHER_SIZE_CLASS
    }

    /** Passes a foreign buffer (of {@code size} bytes where it makes one) to a release path. */
    record FreeForeign(Foreign kind, int pick, int size, Via via) implements Op {
        FreeForeign(final Foreign kind, final int pick, final int size) {
            this(kind, pick, size, Via.FREE);
        }
    }

    record Trim() implements Op {
    }

    record Reap() implements Op {
    }

    /**
     * Runs {@code ops} on a fresh thread that then ends; {@code reap()} adopts its cache at once, or
     * not ({@code reap == false}: later releases of its buffers are deferred to a dead owner).
     */
    record ThreadExit(List<Op> ops, boolean reap) implements Op {
        ThreadExit(final List<Op> ops) {
            this(ops, true);
        }
    }

    /** The allocator's configuration, as generated. */
    record Cfg(int magazineRounds, int depotMagazines, int retainedEmptyChunks, int chunkSizeBytes,
               int minCapacityBytes, boolean zeroOnFree) {
        SlabAllocatorConfig build() {
            return SlabAllocatorConfig.builder().magazineRounds(magazineRounds).depotMagazines(depotMagazines)
                .retainedEmptyChunks(retainedEmptyChunks).chunkSizeBytes(chunkSizeBytes)
                .minCapacityBytes(minCapacityBytes).maxSizeClassBytes(MAX_CLASS).zeroOnFree(zeroOnFree)
                .reapIntervalMillis(60_000) // the reaper thread stays out of the way: checkInvariants() needs quiet
                .build();
        }

        static Cfg defaults() {
            return new Cfg(32, 16, 1, 4 << 20, 1, false);
        }

        static Cfg tiny() {
            return new Cfg(1, 0, 0, 1 << 20, 1, false);
        }
    }

    // ------------------------------------------------------------------------------ properties

    /** Default build: a fixed seed, so every build explores the same 500 programs. */
    @Property(tries = 500, seed = "20261130", shrinking = ShrinkingMode.BOUNDED, edgeCases = EdgeCasesMode.NONE)
    void randomProgramsMatchTheModel(@ForAll("configs") final Cfg cfg, @ForAll("programs") final List<Op> program)
        throws Throwable {
        ModelRun.check(cfg, program);
    }

    /** {@code -Pstress}: a fresh random seed each run (jqwik reports it on failure), ten times the tries. */
    @Property(tries = 3_000, shrinking = ShrinkingMode.BOUNDED, edgeCases = EdgeCasesMode.NONE)
    @net.jqwik.api.Tag("stress")
    void randomProgramsMatchTheModelStress(@ForAll("configs") final Cfg cfg,
                                           @ForAll("programs") final List<Op> program) throws Throwable {
        ModelRun.check(cfg, program);
    }

    @Provide
    Arbitrary<Cfg> configs() {
        return Combinators.combine(
            Arbitraries.of(1, 2, 3, 4, 32),
            Arbitraries.of(0, 1, 2, 16),
            Arbitraries.of(0, 0, 1),
            Arbitraries.of(1 << 20, 4 << 20),
            Arbitraries.of(1, 1, 0, 64),
            Arbitraries.of(false, false, true)).as(Cfg::new);
    }

    @Provide
    Arbitrary<List<Op>> programs() {
        final Arbitrary<Op> simple = simpleOps();
        final Arbitrary<Op> threadExit = Combinators.combine(
            simple.list().ofMaxSize(12).withSizeDistribution(RandomDistribution.uniform()),
            Arbitraries.of(true, false)).as(ThreadExit::new);
        final Arbitrary<Op> any = Arbitraries.frequencyOf(
            Tuple.of(20, simple),
            Tuple.of(1, Arbitraries.just(new Trim())),
            Tuple.of(1, Arbitraries.just(new Reap())),
            Tuple.of(2, threadExit));
        return any.list().ofMinSize(1).ofMaxSize(80).withSizeDistribution(RandomDistribution.uniform());
    }

    private static Arbitrary<Op> simpleOps() {
        final Arbitrary<Integer> picks = Arbitraries.integers().between(0, 1_000);
        final Arbitrary<Op> alloc = Combinators.combine(sizes(), Arbitraries.of(true, false)).as(Alloc::new);
        final Arbitrary<Op> free = Combinators.combine(picks, Arbitraries.of(Via.class)).as(Free::new);
        final Arbitrary<Op> freeTwice = Combinators.combine(picks, Arbitraries.of(Via.class)).as(FreeTwice::new);
        final Arbitrary<Op> freeStale = Combinators.combine(picks, Arbitraries.of(Via.class)).as(FreeStale::new);
        final Arbitrary<Op> foreign = Combinators.combine(Arbitraries.of(Foreign.class), picks,
            Arbitraries.integers().between(0, 5_000), Arbitraries.of(Via.class)).as(FreeForeign::new);
        return Arbitraries.frequencyOf(
            Tuple.of(10, alloc),
            Tuple.of(6, free),
            Tuple.of(2, freeTwice),
            Tuple.of(1, freeStale),
            Tuple.of(3, foreign));
    }

    /** Sizes around every class boundary, random sizes, and sizes the JDK serves. */
    private static Arbitrary<Integer> sizes() {
        final SizeClasses classes = new SizeClasses(MAX_CLASS);
        final List<Integer> boundaries = new ArrayList<>(List.of(0, 1));
        for (int c = 0; c < classes.count(); c++) {
            final int s = classes.size(c);
            boundaries.add(s - 1);
            boundaries.add(s);
            boundaries.add(s + 1);
        }
        return Arbitraries.frequencyOf(
            Tuple.of(5, Arbitraries.of(boundaries)),
            Tuple.of(3, Arbitraries.integers().between(0, MAX_CLASS + 4_096)),
            Tuple.of(1, Arbitraries.of(0, 63, 64, 65, MAX_CLASS + 1, 100_000)));
    }

    // ------------------------------------------------------------------------------ the model

    /** Runs a program against an allocator and the reference model. Usable without jqwik. */
    static final class ModelRun {
        private static final sun.misc.Unsafe UNSAFE;
        private static final long CLEANER_NEXT;

        static {
            try {
                final Field f = sun.misc.Unsafe.class.getDeclaredField("theUnsafe");
                f.setAccessible(true);
                UNSAFE = (sun.misc.Unsafe) f.get(null);
                // jdk.internal.ref.Cleaner.remove() marks a cleaner that ran by pointing "next" at itself
                CLEANER_NEXT = UNSAFE.objectFieldOffset(
                    Class.forName("jdk.internal.ref.Cleaner").getDeclaredField("next"));
            } catch (final ReflectiveOperationException e) {
                throw new ExceptionInInitializerError(e);
            }
        }

        /** A live buffer the model knows. */
        record Live(ByteBuffer buf, long id, int size, boolean tracked, boolean owned) {
        }

        /** Released buffers of ours kept for {@link FreeStale}, at most this many (oldest dropped). */
        static final int STALE_KEPT = 32;

        final SlabAllocator allocator;
        final int minCapacity;
        final int maxCapacity;
        final List<Live> live = new ArrayList<>();
        final List<Live> released = new ArrayList<>();
        /** The allocator whose buffers are {@link Foreign#OTHER_ALLOCATOR}, made on first use. */
        SlabAllocator other;
        long nextId = 1;
        long allocations;
        long frees;
        long doubleFrees;
        long bytesInUse;
        long fallbacks;
        int step;
        String context = "";

        private ModelRun(final SlabAllocator allocator) {
            this.allocator = allocator;
            this.minCapacity = allocator.config().minCapacityBytes();
            this.maxCapacity = allocator.maxCapacity();
        }

        /**
         * Runs {@code program} on a fresh thread (compared with the model after every action), releases
         * what is left, lets the thread end, and checks that the allocator empties completely.
         */
        static void check(final Cfg cfg, final List<Op> program) throws Throwable {
            final SlabAllocator a = new SlabAllocator(cfg.build());
            final ModelRun m = new ModelRun(a);
            try {
                TestSupport.onFreshThread("model", () -> {
                    m.compare("start");
                    for (final Op op : program) {
                        m.step++;
                        m.context = "step " + m.step + " " + op + " on " + cfg;
                        m.apply(op);
                        m.compare(m.context);
                    }
                    m.context = "releasing the rest on " + cfg;
                    while (!m.live.isEmpty()) {
                        m.free(0, Via.FREE, false);
                    }
                    m.compare(m.context);
                });
                a.reap();
                a.checkInvariants();
                a.trim();
                final AllocatorStats s = a.stats();
                assertThat(s.liveBuffers()).isZero();
                assertThat(s.bytesInUse()).isZero();
                assertThat(s.hookFailures()).isZero();
                assertThat(s.threadCaches()).as("caches of the ended threads adopted").isZero();
                for (final CacheStats c : s.caches()) {
                    assertThat(c.slabs()).as("slabs of %s after trim", c.name()).isZero();
                }
                assertThat(s.chunks()).as("chunks after trim").isZero();
                assertThat(s.bytesReserved()).isZero();
            } finally {
                a.close();
                if (m.other != null) {
                    m.other.close();
                }
            }
        }

        void apply(final Op op) throws Throwable {
            if (op instanceof Alloc x) {
                alloc(x.size(), x.tracked());
            } else if (op instanceof Free x) {
                free(x.pick(), x.via(), false);
            } else if (op instanceof FreeTwice x) {
                free(x.pick(), x.via(), true);
            } else if (op instanceof FreeStale x) {
                freeStale(x.pick(), x.via());
            } else if (op instanceof FreeForeign x) {
                freeForeign(x.kind(), x.pick(), x.size(), x.via());
            } else if (op instanceof Trim) {
                allocator.trim();
            } else if (op instanceof Reap) {
                allocator.reap();
            } else if (op instanceof ThreadExit x) {
                TestSupport.onFreshThread("model-sub-" + step, () -> {
                    for (final Op sub : x.ops()) {
                        apply(sub);
                    }
                });
                if (x.reap()) {
                    allocator.reap();
                    assertThat(allocator.stats().threadCaches()).as("sub-thread's cache adopted: %s", context)
                        .isLessThanOrEqualTo(1);
                }
            } else {
                throw new AssertionError(op);
            }
        }

        void alloc(final int size, final boolean tracked) {
            final ByteBuffer b = tracked ? allocator.allocate(size) : allocator.allocateExplicit(size);
            final boolean owned = size >= minCapacity && size <= maxCapacity;
            assertThat(allocator.owns(b)).as("owns: %s", context).isEqualTo(owned);
            assertThat(b.isDirect()).isTrue();
            assertThat(b.isReadOnly()).isFalse();
            assertThat(b.capacity()).as("capacity: %s", context).isEqualTo(size);
            assertThat(b.position()).isZero();
            assertThat(b.limit()).isEqualTo(size);
            assertThat(b.order()).isEqualTo(ByteOrder.BIG_ENDIAN);
            assertThat(AllocatorStressTest.firstNonZero(b)).as("fresh buffer all zeros: %s", context).isEqualTo(-1);
            assertThat(JdkInternals.cleaner(b) != null).as("has a cleaner: %s", context)
                .isEqualTo(tracked || !owned);
            if (owned) {
                assertThat(TestSupport.address(b) % 64).as("cache-line aligned: %s", context).isZero();
                allocations++;
                bytesInUse += size;
            } else {
                fallbacks++;
            }
            final long id = nextId++;
            TestSupport.writePattern(b, id);
            live.add(new Live(b, id, size, tracked, owned));
        }

        /** Releases live buffer {@code pick % live}, once or twice. */
        void free(final int pick, final Via via, final boolean twice) {
            if (live.isEmpty()) {
                return;
            }
            final int i = pick % live.size();
            final Live x = live.get(i);
            assertThat(TestSupport.checkPattern(x.buf(), x.id())).as("pattern of %s before release: %s", x, context)
                .isEqualTo(-1);
            final boolean explicitSlab = !x.tracked() && x.owned();
            if (explicitSlab && via != Via.FREE && !twice) {
                release(x, via); // no cleaner: the JDK does nothing, the buffer stays live
                assertThat(TestSupport.address(x.buf())).isNotZero();
                return;
            }
            live.remove(i);
            released.add(x);
            if (released.size() > STALE_KEPT) {
                released.remove(0);
            }
            release(x, explicitSlab ? Via.FREE : via);
            if (x.owned()) {
                frees++;
                bytesInUse -= x.size();
            }
            if (explicitSlab) {
                assertThat(TestSupport.address(x.buf())).as("explicit buffer's address cleared: %s", context).isZero();
            } else {
                assertThat(cleaned(x.buf())).as("cleaner ran: %s", context).isTrue();
            }
            if (twice) {
                release(x, explicitSlab ? Via.FREE : via);
                if (explicitSlab) {
                    doubleFrees++;
                }
            }
        }

        private void release(final Live x, final Via via) {
            release(x.buf(), via);
        }

        private void release(final ByteBuffer b, final Via via) {
            switch (via) {
                case FREE -> allocator.free(b);
                case INVOKE_CLEANER -> TestSupport.invokeCleaner(b);
                case CLEANER_CLEAN -> TestSupport.cleanerClean(b);
                default -> throw new AssertionError(via);
            }
        }

        /** Releases a released buffer of ours again: a no-op but for a counted second {@code free()} of an explicit one. */
        void freeStale(final int pick, final Via via) {
            if (released.isEmpty()) {
                return;
            }
            final Live x = released.get(pick % released.size());
            release(x, via);
            if (!x.tracked() && x.owned() && via == Via.FREE) {
                doubleFrees++;
            }
        }

        /** A buffer that is no live root of ours through {@code via}: refused, or passed to the JDK unchanged. */
        void freeForeign(final Foreign kind, final int pick, final int size, final Via via) throws IOException {
            final List<Live> owned = live.stream().filter(Live::owned).toList();
            final Live ours = owned.isEmpty() ? null : owned.get(pick % owned.size());
            switch (kind) {
                case JDK_ROOT, JDK_ZERO_CAPACITY -> {
                    final ByteBuffer b = ByteBuffer.allocateDirect(kind == Foreign.JDK_ROOT ? size : 0);
                    assertThat(allocator.owns(b)).isFalse();
                    release(b, via);
                    assertThat(cleaned(b)).as("JDK buffer cleaned: %s", context).isTrue();
                    release(b, via); // a second release of a JDK buffer is a no-op
                }
                case MAPPED_FILE, MAPPED_EMPTY -> mapped(kind == Foreign.MAPPED_FILE ? Math.max(size, 1) : 0, via);
                case HEAP -> {
                    if (via == Via.INVOKE_CLEANER) {
                        assertThatThrownBy(() -> TestSupport.invokeCleaner(ByteBuffer.allocate(size)))
                            .isInstanceOf(IllegalArgumentException.class).hasMessage("buffer is non-direct");
                    } else { // a heap buffer has no cleaner() at all
                        assertThatThrownBy(() -> allocator.free(ByteBuffer.allocate(size)))
                            .isInstanceOf(IllegalArgumentException.class).hasMessageStartingWith("not a direct buffer");
                    }
                }
                case SLICE_OF_OURS, DUPLICATE_OF_OURS, READ_ONLY_OF_OURS, ALIGNED_SLICE_OF_OURS,
                    ZERO_CAPACITY_SLICE_OF_OURS -> {
                    if (ours == null) {
                        return;
                    }
                    final ByteBuffer view = view(kind, ours);
                    assertThat(allocator.owns(view)).isFalse();
                    if (via == Via.CLEANER_CLEAN) {
                        assertThat(TestSupport.cleanerClean(view)).as("a view has no cleaner: %s", context).isFalse();
                    } else {
                        assertThatThrownBy(() -> release(view, via)).as(context)
                            .isInstanceOf(IllegalArgumentException.class).hasMessage("duplicate or slice");
                    }
                }
                case LONG_VIEW_OF_OURS -> {
                    if (ours != null) {
                        assertThat(TestSupport.cleanerClean(ours.buf().asLongBuffer())).as("no cleaner: %s", context)
                            .isFalse();
                    }
                }
                case OTHER_ALLOCATOR -> otherAllocators(pick % 2 == 0, size, via);
                case ALIAS_INSIDE_OURS, ALIAS_OTHER_SIZE_CLASS -> alias(kind, pick, via);
                case SLICE_OF_JDK -> {
                    final ByteBuffer root = ByteBuffer.allocateDirect(size);
                    final ByteBuffer view = root.slice();
                    assertThatThrownBy(() -> allocator.free(view))
                        .isInstanceOf(IllegalArgumentException.class).hasMessage("duplicate or slice");
                    allocator.free(root);
                    assertThat(cleaned(root)).isTrue();
                }
                case NO_CLEANER_FOREIGN -> {
                    final int n = Math.max(size, 1);
                    final long memory = UNSAFE.allocateMemory(n);
                    try {
                        refusedOrNothing(JdkInternals.newDirectBuffer(n, memory, null), via);
                    } finally {
                        UNSAFE.freeMemory(memory);
                    }
                }
                default -> throw new AssertionError(kind);
            }
        }

        private static ByteBuffer view(final Foreign kind, final Live ours) {
            return switch (kind) {
                case SLICE_OF_OURS -> ours.buf().slice(0, ours.size() / 2);
                case DUPLICATE_OF_OURS -> ours.buf().duplicate();
                case READ_ONLY_OF_OURS -> ours.buf().asReadOnlyBuffer();
                case ALIGNED_SLICE_OF_OURS -> ours.buf().duplicate().position(Math.min(3, ours.size())).alignedSlice(8);
                case ZERO_CAPACITY_SLICE_OF_OURS -> ours.buf().slice(ours.size(), 0);
                default -> throw new AssertionError(kind);
            };
        }

        /** A no-cleaner root the allocator did not hand out: {@code free()} refuses it, the JDK has nothing to run. */
        private void refusedOrNothing(final ByteBuffer b, final Via via) {
            final long address = TestSupport.address(b);
            assertThat(allocator.owns(b) && via == Via.FREE).as("a no-cleaner root over our memory: %s", context)
                .isFalse();
            if (via == Via.FREE) {
                assertThatThrownBy(() -> allocator.free(b)).as(context).isInstanceOf(IllegalArgumentException.class)
                    .hasMessageStartingWith("not a buffer of this allocator");
            } else {
                release(b, via);
            }
            assertThat(TestSupport.address(b)).as("nothing changed: %s", context).isEqualTo(address);
        }

        /** A no-cleaner root inside a live buffer of ours (class above 64 B), or at it with another class's capacity. */
        private void alias(final Foreign kind, final int pick, final Via via) {
            final List<Live> candidates = live.stream()
                .filter(l -> l.owned() && (kind == Foreign.ALIAS_OTHER_SIZE_CLASS || l.size() > 64)).toList();
            if (candidates.isEmpty()) {
                return;
            }
            final Live ours = candidates.get(pick % candidates.size());
            final int objectSize = allocator.classes.size(allocator.classes.indexOf(ours.size()));
            final ByteBuffer alias = kind == Foreign.ALIAS_INSIDE_OURS
                ? JdkInternals.newDirectBuffer(objectSize - 64, TestSupport.address(ours.buf()) + 64, null)
                : JdkInternals.newDirectBuffer(objectSize < maxCapacity ? objectSize + 1 : 1,
                    TestSupport.address(ours.buf()), null);
            if (via == Via.FREE) {
                assertThatThrownBy(() -> allocator.free(alias)).as(context).isInstanceOf(IllegalArgumentException.class)
                    .hasMessageStartingWith("not a buffer of this allocator");
            } else {
                release(alias, via);
            }
        }

        /** {@code FileChannel.map} of a temporary file: the JDK unmaps it; an empty map is a counted no-op. */
        private void mapped(final int size, final Via via) throws IOException {
            final Path file = Files.createTempFile("kmem4j-model", ".map");
            try (FileChannel ch = FileChannel.open(file, StandardOpenOption.READ, StandardOpenOption.WRITE)) {
                final ByteBuffer b = ch.map(FileChannel.MapMode.READ_WRITE, 0, size);
                release(b, via);
                if (size > 0) {
                    assertThat(cleaned(b)).as("mapping released: %s", context).isTrue();
                } else if (via == Via.FREE) {
                    doubleFrees++; // address 0, no cleaner: as a freed zero-capacity explicit buffer of ours
                }
            } finally {
                Files.delete(file);
            }
        }

        /** A buffer of another allocator: its own hook releases a tracked one; ours refuses an explicit one. */
        private void otherAllocators(final boolean tracked, final int size, final Via via) {
            if (other == null) {
                other = new SlabAllocator(SlabAllocatorConfig.builder().reapIntervalMillis(60_000).build());
            }
            final ByteBuffer b = tracked ? other.allocate(size) : other.allocateExplicit(size);
            if (!other.owns(b) || tracked) {
                release(b, via); // a JDK buffer, or the other allocator's release hook
                assertThat(cleaned(b)).as("released by its own cleaner: %s", context).isTrue();
            } else {
                if (via == Via.FREE) {
                    assertThatThrownBy(() -> allocator.free(b)).as(context).isInstanceOf(IllegalArgumentException.class)
                        .hasMessageStartingWith("not a buffer of this allocator");
                } else {
                    release(b, via);
                }
                other.free(b);
            }
            assertThat(other.stats().liveBuffers()).as("the other allocator's buffer went home: %s", context).isZero();
        }

        /** @return true when the buffer's JDK cleaner has run. */
        static boolean cleaned(final ByteBuffer b) {
            final Object cleaner = JdkInternals.cleaner(b);
            return cleaner != null && UNSAFE.getObject(cleaner, CLEANER_NEXT) == cleaner;
        }

        /** Compares every counter the model predicts, every live pattern, and the accounting equations. */
        void compare(final String when) {
            final AllocatorStats s = allocator.stats();
            assertThat(s.allocations()).as("allocations after %s", when).isEqualTo(allocations);
            assertThat(s.explicitFrees()).as("explicitFrees after %s", when).isEqualTo(frees);
            assertThat(s.gcFrees()).as("gcFrees after %s", when).isZero();
            assertThat(s.frees()).as("frees after %s", when).isEqualTo(frees);
            assertThat(s.liveBuffers()).as("liveBuffers after %s", when).isEqualTo(allocations - frees)
                .isEqualTo(live.stream().filter(Live::owned).count());
            assertThat(s.bytesInUse()).as("bytesInUse after %s", when).isEqualTo(bytesInUse);
            assertThat(s.doubleFrees()).as("doubleFrees after %s", when).isEqualTo(doubleFrees);
            assertThat(s.fallbacks()).as("fallbacks after %s", when).isEqualTo(fallbacks);
            assertThat(s.hookFailures()).as("hookFailures after %s", when).isZero();
            for (final Live x : live) {
                assertThat(TestSupport.checkPattern(x.buf(), x.id())).as("pattern of %s after %s", x, when)
                    .isEqualTo(-1);
                assertThat(allocator.owns(x.buf())).as("owns %s after %s", x, when).isEqualTo(x.owned());
            }
            allocator.checkInvariants();
        }
    }

    // ---------------------------------------------------------------- fixed sequences

    /**
     * Shrunk by jqwik (seed 20261130): the second {@code free()} of a zero-capacity explicit slab buffer
     * ({@code minCapacityBytes(0)}) threw "not a buffer of this allocator" instead of counting a double
     * free (also {@code ExplicitBuffersTest}).
     */
    @Example
    void aSecondFreeOfAZeroCapacityExplicitBufferIsCountedNotRejected() throws Throwable {
        ModelRun.check(new Cfg(1, 0, 0, 1 << 20, 0, false),
            List.of(new ThreadExit(List.of(new Alloc(0, false))), new FreeTwice(0, Via.FREE)));
    }

    /**
     * Shrunk by jqwik (seed 20261130, 31 shrinking steps) when the model was run against {@code free()}
     * as it was before 37970d6: a no-cleaner root at our buffer's address with a capacity of another size
     * class (as JNI {@code NewDirectByteBuffer} makes) was accepted, and its block handed out twice.
     */
    @Example
    void aForeignRootAtOurAddressWithAnotherSizeClassIsRefused() throws Throwable {
        ModelRun.check(new Cfg(1, 0, 0, 1 << 20, 1, false), List.of(new ThreadExit(List.of(
            new Alloc(1, true), new FreeForeign(Foreign.ALIAS_OTHER_SIZE_CLASS, 0, 0, Via.FREE)), true)));
    }

    /**
     * Every new action once, on tiny magazines: aliases inside our buffers, maps (empty too), views,
     * another allocator's buffers through every path, stale releases after reuse, and a thread whose
     * buffers are released after it ended but before its cache was adopted.
     */
    @Example
    void foreignStaleAndLateReleasesThroughEveryPathMatchTheModel() throws Throwable {
        final List<Op> program = new ArrayList<>();
        program.add(new ThreadExit(List.of(new Alloc(4_096, true), new Alloc(4_096, false), new Alloc(100, false),
            new Alloc(65, true)), false));
        for (final Via via : Via.values()) {
            for (final Foreign f : Foreign.values()) {
                program.add(new FreeForeign(f, via.ordinal() + f.ordinal(), 300, via));
            }
            program.add(new Free(0, via));
            program.add(new Alloc(4_096, via.ordinal() % 2 == 0));
            program.add(new FreeStale(0, via));
            program.add(new FreeStale(1, via));
        }
        program.add(new Reap());
        program.add(new FreeTwice(2, Via.CLEANER_CLEAN));
        ModelRun.check(Cfg.tiny(), program);
        ModelRun.check(Cfg.defaults(), program);
    }

    @Example
    void aMixedProgramOnTheDefaultConfigurationMatchesTheModel() throws Throwable {
        ModelRun.check(Cfg.defaults(), List.of(
            new Alloc(64, true), new Alloc(65, false), new Alloc(65_536, true), new Alloc(65_537, false),
            new FreeForeign(Foreign.SLICE_OF_OURS, 1, 0), new FreeTwice(1, Via.FREE),
            new ThreadExit(List.of(new Alloc(1_000, false), new Free(0, Via.FREE), new Alloc(2_000, true))),
            new FreeForeign(Foreign.JDK_ROOT, 0, 100), new FreeForeign(Foreign.HEAP, 0, 10),
            new FreeForeign(Foreign.NO_CLEANER_FOREIGN, 0, 128), new Trim(), new Free(0, Via.INVOKE_CLEANER),
            new Reap()));
    }

    @Example
    void everyActionOnTinyMagazinesMatchesTheModel() throws Throwable {
        final List<Op> program = new ArrayList<>();
        for (int i = 0; i < 40; i++) {
            program.add(new Alloc(1 + i * 1_500, i % 2 == 0));
        }
        for (final Foreign f : Foreign.values()) {
            program.add(new FreeForeign(f, 3, 200));
        }
        program.add(new ThreadExit(List.of(new Free(5, Via.FREE), new Free(7, Via.INVOKE_CLEANER),
            new FreeTwice(9, Via.FREE), new Alloc(640, false), new Alloc(641, true))));
        for (int i = 0; i < 20; i++) {
            program.add(new FreeTwice(i * 7, i % 2 == 0 ? Via.FREE : Via.INVOKE_CLEANER));
        }
        program.add(new Trim());
        ModelRun.check(Cfg.tiny(), program);
    }
}
