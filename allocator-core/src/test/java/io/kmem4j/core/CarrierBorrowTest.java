package io.kmem4j.core;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assertions.assertTimeoutPreemptively;

import java.nio.ByteBuffer;
import java.time.Duration;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * A virtual thread pops and pushes its carrier's magazines only while it has borrowed the carrier's
 * cache ({@link ThreadCache#borrow()}). JDK 26+ may unmount a virtual thread in the middle of such an
 * operation (waiting for another thread's class initialization, JDK-8369238): it goes on with the
 * first carrier's cache elsewhere while another virtual thread mounts on that carrier. In CI on
 * JDK 27 two such popped one magazine ({@code ArrayIndexOutOfBoundsException: Index -1} in
 * {@code Magazine.pop}). Here the moved thread is stood in for by a borrow held by the test: the
 * second virtual thread must leave the magazines alone and be served by the shared tier.
 *
 * <p>The "carrier" is the test thread's own platform cache (its magazines filled by a free), and the
 * carrier paths are called with it directly, so this runs on every JDK, 17 included.
 */
class CarrierBorrowTest {
    private static final int SIZE = 4096;

    private SlabAllocator a;
    private ThreadCache carrier;
    private int cls;

    @BeforeEach
    void carrierWithRounds() {
        a = new SlabAllocator(SlabAllocatorConfig.builder().reapIntervalMillis(60_000).build());
        a.free(a.allocateExplicit(SIZE)); // the test thread's magazines of the class hold rounds now
        carrier = a.registry.current();
        cls = a.classes.indexOf(SIZE);
        assertThat(carrier.loaded[cls].count).as("rounds in the carrier's loaded magazine").isPositive();
    }

    @AfterEach
    void close() {
        a.close();
    }

    @Test
    void anAllocationLeavesABorrowedCarriersMagazinesAlone() {
        final int rounds = carrier.loaded[cls].count;
        final long carrierAllocs = allocs(carrier);
        final long sharedAllocs = allocs(a.registry.virtual);
        assertThat(carrier.borrow()).as("the borrow of the virtual thread that moved away").isTrue();
        final ByteBuffer b;
        try {
            b = a.sharedTier.allocateOnCarrier(a.registry.virtual, carrier, SIZE, false);
            assertThat(b).as("served").isNotNull();
            assertThat(a.owns(b)).isTrue();
            assertThat(carrier.loaded[cls].count).as("rounds of the borrowed magazine").isEqualTo(rounds);
            assertThat(allocs(carrier)).as("allocations counted on the borrowed carrier").isEqualTo(carrierAllocs);
            assertThat(allocs(a.registry.virtual)).as("allocations of the shared tier").isEqualTo(sharedAllocs + 1);
        } finally {
            carrier.endBorrow();
        }
        final ByteBuffer c = a.sharedTier.allocateOnCarrier(a.registry.virtual, carrier, SIZE, false);
        assertThat(carrier.loaded[cls].count).as("rounds once the borrow ended: a pop").isEqualTo(rounds - 1);
        assertThat(allocs(carrier)).isEqualTo(carrierAllocs + 1);
        a.free(b);
        a.free(c);
    }

    @Test
    void aFreeLeavesABorrowedCarriersMagazinesAlone() {
        final ByteBuffer b = a.allocateExplicit(SIZE);
        final long address = TestSupport.address(b);
        final int rounds = carrier.loaded[cls].count;
        assertThat(carrier.borrow()).isTrue();
        try {
            assertThat(a.sharedTier.freeOnCarrier(carrier, cls, address, SIZE, 0))
                .as("kept on a borrowed carrier").isFalse();
            assertThat(carrier.loaded[cls].count).as("rounds of the borrowed magazine").isEqualTo(rounds);
        } finally {
            carrier.endBorrow();
        }
        assertThat(a.sharedTier.freeOnCarrier(carrier, cls, address, SIZE, 0))
            .as("kept once the borrow ended").isTrue();
        assertThat(carrier.loaded[cls].count).as("rounds: a push").isEqualTo(rounds + 1);
    }

    @Test
    void aBorrowIsExclusiveUntilItEnds() {
        assertThat(carrier.borrow()).isTrue();
        assertThat(carrier.borrow()).as("a second borrow while the first lasts").isFalse();
        carrier.endBorrow();
        assertThat(carrier.borrow()).as("a borrow after the first ended").isTrue();
        carrier.endBorrow();
    }

    @Test
    void theCarrierRunningItsOwnCodeLeavesBorrowedMagazinesAlone() {
        assertThat(carrier.becomeCarrier()).isTrue();
        final int rounds = carrier.loaded[cls].count;
        final long sharedAllocs = allocs(a.registry.shared);
        assertThat(carrier.borrow()).as("the borrow of the virtual thread that moved away").isTrue();
        final ByteBuffer b;
        try {
            b = a.allocateExplicit(SIZE); // the test thread is the carrier, running its own code
            assertThat(a.owns(b)).isTrue();
            assertThat(carrier.loaded[cls].count).as("rounds of the borrowed magazine").isEqualTo(rounds);
            assertThat(allocs(a.registry.shared)).as("allocations of the shared tier").isEqualTo(sharedAllocs + 1);
            a.free(b);
            assertThat(carrier.loaded[cls].count).as("rounds after a free during the borrow").isEqualTo(rounds);
        } finally {
            carrier.endBorrow();
        }
        final ByteBuffer c = a.allocateExplicit(SIZE);
        assertThat(carrier.loaded[cls].count).as("rounds once the borrow ended: a pop").isEqualTo(rounds - 1);
        a.free(c);
        assertThat(carrier.loaded[cls].count).as("and a push").isEqualTo(rounds);
        assertThat(carrier.borrow()).as("the carrier's own borrows ended").isTrue();
        carrier.endBorrow();
    }

    @Test
    void aCarrierIsNeverRevoked() {
        assertThat(carrier.becomeCarrier()).isTrue();
        assertThat(carrier.isCarrier()).isTrue();
        assertThat(carrier.beginRevocation()).as("a revocation of a carrier's cache").isFalse();
        assertThat(carrier.isCarrier()).isTrue();
    }

    @Test
    void aRevocationUnderWayDelaysBecomingACarrier() {
        assertThat(carrier.beginRevocation()).isTrue();
        assertThat(carrier.becomeCarrier()).as("while the reaper empties the cache").isFalse();
        assertThat(carrier.carrier).as("the reaper skips it from now on").isTrue();
        carrier.endRevocation(true);
        assertThat(carrier.becomeCarrier()).as("once the revocation ended").isTrue();
        assertThat(carrier.isCarrier()).isTrue();
    }

    @Test
    void aPassLeavesAnEndedCarrierStillBorrowedToTheNextOne() throws InterruptedException {
        final ThreadCache[] ended = new ThreadCache[1];
        final Thread t = new Thread(() -> {
            a.free(a.allocateExplicit(SIZE));
            ended[0] = a.registry.current();
            ended[0].becomeCarrier();
        });
        t.start();
        t.join(30_000);
        assertThat(t.isAlive()).isFalse();
        final ThreadCache tc = ended[0];
        assertThat(tc.borrow()).as("the borrow of a virtual thread that moved away").isTrue();
        try {
            assertTimeoutPreemptively(Duration.ofSeconds(60), () -> a.reap(), "a pass waiting for the borrow");
            assertThat(a.registry.of(t)).as("the ended carrier's cache, left to the next pass").isSameAs(tc);
        } finally {
            tc.endBorrow();
        }
        a.reap();
        assertThat(a.registry.of(t)).as("retired by the next pass").isNull();
        assertThat(tc.loaded[cls].count).as("its rounds given back").isZero();
    }

    private static long allocs(final ThreadCache tc) {
        long n = 0;
        for (int i = ThreadCache.classBase(0) + ThreadCache.ALLOCS; i < tc.stats.length; i += ThreadCache.CLASS_STRIDE) {
            n += tc.stats[i];
        }
        return n;
    }
}
