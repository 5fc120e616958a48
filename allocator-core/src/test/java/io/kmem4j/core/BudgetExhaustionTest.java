package io.kmem4j.core;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.lang.reflect.Field;
import java.nio.ByteBuffer;
import java.util.concurrent.atomic.AtomicLong;

import org.junit.jupiter.api.Test;

/**
 * With the direct-memory budget exhausted, one failed chunk reservation is enough: for a moment
 * afterwards growth is refused at once and requests go to the JDK's own path, instead of every
 * allocating thread (thousands of virtual threads, say) queuing for its own GC-and-back-off.
 */
class BudgetExhaustionTest {
    @Test
    void aFailedReservationIsSharedForAMomentInsteadOfRepeated() throws Exception {
        final SlabAllocator a = new SlabAllocator(SlabAllocatorConfig.builder().reapIntervalMillis(60_000).build());
        final Class<?> bits = Class.forName("java.nio.Bits");
        final long max = (long) field(bits, "MAX_MEMORY").get(null);
        final long used = ((AtomicLong) field(bits, "RESERVED_MEMORY").get(null)).get();
        final long take = max - used - (1 << 20); // leave 1 MiB: less than one 4 MiB chunk
        JdkInternals.reserveDirectMemory(take);
        try {
            assertThatThrownBy(() -> a.pages.grow(a.pages.snapshot())).isInstanceOf(OutOfMemoryError.class)
                .hasMessageContaining("does not fit under MaxDirectMemorySize");
            final long attempts = a.pages.reserveAttempts();
            // right after the failure (well inside the hold window): refused at once, no new reservation
            final ByteBuffer b = a.tryAllocate(4096);
            assertThat(b).as("slab path refused, the JDK's path serves it").isNull();
            assertThat(a.pages.reserveAttempts()).as("reservations after the first failure").isEqualTo(attempts);
            assertThat(a.stats().fallbacks()).isEqualTo(1);
        } finally {
            JdkInternals.unreserveDirectMemory(take);
            a.close();
        }
    }

    private static Field field(final Class<?> owner, final String name) throws NoSuchFieldException {
        final Field f = owner.getDeclaredField(name);
        f.setAccessible(true);
        return f;
    }
}
