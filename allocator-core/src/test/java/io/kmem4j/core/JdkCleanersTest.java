package io.kmem4j.core;

import static org.assertj.core.api.Assertions.assertThat;

import java.lang.reflect.Field;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;

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
            assertThat(s.cleaners[s.indexOf(address)]).as("the slab's slot").isSameAs(cleaner);
            TestSupport.invokeCleaner(b);
            assertThat(s.cleaners[s.indexOf(address)]).as("the slot after the release").isNull();
            TestSupport.invokeCleaner(b);
            assertThat(a.stats().frees()).as("a second release frees nothing").isEqualTo(1);
        }
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
