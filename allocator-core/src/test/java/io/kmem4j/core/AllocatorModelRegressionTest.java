package io.kmem4j.core;

import java.util.ArrayList;
import java.util.List;

import io.kmem4j.core.AllocatorModelTest.Alloc;
import io.kmem4j.core.AllocatorModelTest.Cfg;
import io.kmem4j.core.AllocatorModelTest.Foreign;
import io.kmem4j.core.AllocatorModelTest.Free;
import io.kmem4j.core.AllocatorModelTest.FreeForeign;
import io.kmem4j.core.AllocatorModelTest.FreeStale;
import io.kmem4j.core.AllocatorModelTest.FreeTwice;
import io.kmem4j.core.AllocatorModelTest.Op;
import io.kmem4j.core.AllocatorModelTest.Reap;
import io.kmem4j.core.AllocatorModelTest.ThreadExit;
import io.kmem4j.core.AllocatorModelTest.Trim;
import io.kmem4j.core.AllocatorModelTest.Via;
import org.junit.jupiter.api.Test;

/**
 * Plain JUnit replays of action sequences through {@link AllocatorModelTest}'s reference model:
 * sequences jqwik shrank a failure to, and two hand-written programs that touch every action.
 */
class AllocatorModelRegressionTest {
    /**
     * Shrunk by jqwik (seed 20261130): the second {@code free()} of a zero-capacity explicit slab buffer
     * ({@code minCapacityBytes(0)}) threw "not a buffer of this allocator" instead of counting a double
     * free (see {@code ExplicitZeroCapacityDoubleFreeBugTest}).
     */
    @Test
    void regressionZeroCapacityExplicitDoubleFree() throws Throwable {
        AllocatorModelTest.ModelRun.check(new Cfg(1, 0, 0, 1 << 20, 0, false),
            List.of(new ThreadExit(List.of(new Alloc(0, false))), new FreeTwice(0, Via.FREE)));
    }

    /**
     * Shrunk by jqwik (seed 20261130, 31 shrinking steps) when the model was run against {@code free()}
     * as it was before 37970d6: a no-cleaner root at our buffer's address with a capacity of another size
     * class (as JNI {@code NewDirectByteBuffer} makes) was accepted, and its block handed out twice.
     */
    @Test
    void regressionAliasWithAnotherSizeClassIsRefused() throws Throwable {
        AllocatorModelTest.ModelRun.check(new Cfg(1, 0, 0, 1 << 20, 1, false), List.of(new ThreadExit(List.of(
            new Alloc(1, true), new FreeForeign(Foreign.ALIAS_OTHER_SIZE_CLASS, 0, 0, Via.FREE)), true)));
    }

    /**
     * Every new action once, on tiny magazines: aliases inside our buffers, maps (empty too), views,
     * another allocator's buffers through every path, stale releases after reuse, and a thread whose
     * buffers are released after it ended but before its cache was adopted.
     */
    @Test
    void foreignStaleAndLateReleasesThroughEveryPath() throws Throwable {
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
        AllocatorModelTest.ModelRun.check(Cfg.tiny(), program);
        AllocatorModelTest.ModelRun.check(Cfg.defaults(), program);
    }

    @Test
    void mixedProgramOnDefaultConfig() throws Throwable {
        AllocatorModelTest.ModelRun.check(Cfg.defaults(), List.of(
            new Alloc(64, true), new Alloc(65, false), new Alloc(65_536, true), new Alloc(65_537, false),
            new FreeForeign(Foreign.SLICE_OF_OURS, 1, 0), new FreeTwice(1, Via.FREE),
            new ThreadExit(List.of(new Alloc(1_000, false), new Free(0, Via.FREE), new Alloc(2_000, true))),
            new FreeForeign(Foreign.JDK_ROOT, 0, 100), new FreeForeign(Foreign.HEAP, 0, 10),
            new FreeForeign(Foreign.NO_CLEANER_FOREIGN, 0, 128), new Trim(), new Free(0, Via.INVOKE_CLEANER),
            new Reap()));
    }

    @Test
    void everyActionOnTinyMagazines() throws Throwable {
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
        AllocatorModelTest.ModelRun.check(Cfg.tiny(), program);
    }
}
