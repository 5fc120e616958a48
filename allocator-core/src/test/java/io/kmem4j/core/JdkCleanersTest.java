package io.kmem4j.core;

import static org.assertj.core.api.Assertions.assertThat;

import java.lang.reflect.Field;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;
import java.util.function.Consumer;

import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;

/**
 * Unit tests of {@link JdkCleaners}: cleaners of the JDK's own type that are not in the JDK's
 * cleaner list (the owned lifecycle). On JDK 17-25 the list is {@code jdk.internal.ref.Cleaner.first}.
 */
class JdkCleanersTest {
    @Test
    void unregisteredCleanersCanBeBuiltOnThisJdk() {
        assertThat(JdkCleaners.failure()).isNull();
        assertThat(OwnedLifecycle.mark()).isNotNull();
    }

    @Test
    void aMarkedCleanerIsTheBuffersCleanerAndNotInTheJdksList() throws Exception {
        Assumptions.assumeTrue(JdkCleaners.REFERENCE_HANDLER_CLEANS, "the JDK's list is jdk.internal.ref.Cleaner's on 17-25");
        final ByteBuffer backing = ByteBuffer.allocateDirect(64);
        final ByteBuffer b = JdkInternals.newDirectBuffer(64, TestSupport.address(backing), null);
        assertThat(JdkInternals.cleaner(b)).as("built without a cleaner").isNull();
        final Object cleaner = JdkCleaners.build(b, () -> { });
        assertThat(JdkInternals.cleaner(b)).as("cleaner()").isSameAs(cleaner);
        assertThat(JdkCleaners.isMarked(cleaner)).isTrue();
        assertThat(jdkList()).as("the JDK's cleaner list").doesNotContain(cleaner)
            .contains(JdkInternals.cleaner(backing));
    }

    @Test
    void inTheOwnedLifecycleATrackedBuffersCleanerIsMarkedAndKeptByItsSlab() {
        Assumptions.assumeTrue(OwnedLifecycle.enabled(), "owned lifecycle off (surefire execution owned-lifecycle)");
        try (SlabAllocator a = new SlabAllocator(SlabAllocatorConfig.defaults())) {
            final ByteBuffer b = a.allocate(300);
            final Object cleaner = JdkInternals.cleaner(b);
            assertThat(JdkCleaners.isMarked(cleaner)).isTrue();
            final long address = TestSupport.address(b);
            final Slab s = a.pages.slabOf(address);
            assertThat(s.cleanerAt(s.indexOf(address))).as("the slab's slot").isSameAs(cleaner);
            TestSupport.invokeCleaner(b);
            assertThat(s.cleanerAt(s.indexOf(address))).as("the slot after the release").isNull();
            TestSupport.invokeCleaner(b);
            assertThat(a.stats().frees()).as("a second release frees nothing").isEqualTo(1);
        }
    }

    /**
     * What the agent's rewritten {@code clean()} does with a marked cleaner: it passes itself to its
     * thunk, the hook of the buffer's slab slot, which releases once for the cleaner armed last and
     * nothing for a stale one (a cleaner whose slot was released and handed out again since).
     */
    @Test
    @SuppressWarnings("unchecked")
    void theSlotsHookReleasesOnceForTheCleanerArmedLastAndNothingForAStaleOne() throws Exception {
        Assumptions.assumeTrue(OwnedLifecycle.enabled(), "owned lifecycle off (surefire execution owned-lifecycle)");
        try (SlabAllocator a = new SlabAllocator(SlabAllocatorConfig.defaults())) {
            final ByteBuffer b = a.allocate(300);
            final Object c = JdkInternals.cleaner(b);
            final long address = TestSupport.address(b);
            final Slab s = a.pages.slabOf(address);
            final Consumer<Object> hook = (Consumer<Object>) thunkOf(c);
            assertThat(hook).as("the thunk is the slot's hook").isSameAs(s.hook(s.indexOf(address), a));
            hook.accept(c);
            assertThat(a.stats().frees()).isEqualTo(1);
            final ByteBuffer b2 = a.allocate(280);
            assertThat(TestSupport.address(b2)).as("precondition: the block was handed out again").isEqualTo(address);
            final Object c2 = JdkInternals.cleaner(b2);
            assertThat(thunkOf(c2)).as("one hook per slot, not per buffer").isSameAs(hook);
            hook.accept(c); // stale
            assertThat(a.stats().frees()).as("a stale cleaner frees nothing").isEqualTo(1);
            ((Runnable) hook).run(); // a caller that cannot say which cleaner runs (an older kmem4j's prologue)
            assertThat(a.stats().frees()).as("run() without the JDK's removal mark frees nothing").isEqualTo(1);
            assertThat(s.cleanerAt(s.indexOf(address))).isSameAs(c2);
            assertThat(a.stats().bytesInUse()).isEqualTo(280);
            hook.accept(c2);
            hook.accept(c2);
            assertThat(a.stats().frees()).as("once per cleaner").isEqualTo(2);
            assertThat(a.stats().bytesInUse()).as("the capacity of the buffer over the slot then").isZero();
            assertThat(s.cleanerAt(s.indexOf(address))).isNull();
        }
    }

    /** @return the thunk of a JDK 17-25 cleaner. */
    private static Object thunkOf(final Object cleaner) throws ReflectiveOperationException {
        final Field thunk = Class.forName("jdk.internal.ref.Cleaner").getDeclaredField("thunk");
        thunk.setAccessible(true);
        return thunk.get(cleaner);
    }

    /** @return every cleaner in jdk.internal.ref.Cleaner's list. */
    private static List<Object> jdkList() throws ReflectiveOperationException {
        final Class<?> c = Class.forName("jdk.internal.ref.Cleaner");
        final Field first = c.getDeclaredField("first");
        final Field next = c.getDeclaredField("next");
        first.setAccessible(true);
        next.setAccessible(true);
        final List<Object> out = new ArrayList<>();
        synchronized (c) {
            for (Object n = first.get(null); n != null; n = next.get(n)) {
                out.add(n);
            }
        }
        return out;
    }
}
