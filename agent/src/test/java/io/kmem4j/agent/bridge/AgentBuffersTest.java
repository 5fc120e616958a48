package io.kmem4j.agent.bridge;

import java.lang.management.BufferPoolMXBean;
import java.lang.management.ManagementFactory;
import java.lang.reflect.Field;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.ArrayList;
import java.util.List;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/** The agent threads' buffers: allocateDirect's shape, outside the JDK's direct-memory account, freed once. */
class AgentBuffersTest {

    private static BufferPoolMXBean direct() {
        return ManagementFactory.getPlatformMXBeans(BufferPoolMXBean.class).stream()
            .filter(p -> p.getName().equals("direct")).findFirst().orElseThrow();
    }

    private static void invokeCleaner(final ByteBuffer b) throws Exception {
        final Field f = sun.misc.Unsafe.class.getDeclaredField("theUnsafe");
        f.setAccessible(true);
        ((sun.misc.Unsafe) f.get(null)).invokeCleaner(b);
    }

    @Test
    void aBufferAsAllocateDirectsOutsideTheJdksAccountFreedExactlyOnce() throws Exception {
        final ByteBuffer b = AgentBuffers.allocate(8192);
        assertThat(b).isNotNull();
        assertThat(b.isDirect()).isTrue();
        assertThat(b.capacity()).isEqualTo(8192);
        assertThat(b.position()).isZero();
        assertThat(b.limit()).isEqualTo(8192);
        assertThat(b.order()).isEqualTo(ByteOrder.BIG_ENDIAN);
        assertThat(b.isReadOnly()).isFalse();
        for (int i = 0; i < b.capacity(); i++) {
            assertThat(b.get(i)).as("byte %d", i).isZero();
        }
        b.putLong(8184, -1L);
        invokeCleaner(b);
        assertThat(accountedOutsideTheJdkAndFreedOnce(8192)).isEqualTo("ok");
    }

    /**
     * Allocates a buffer and frees it twice, checking that the agent's account took its bytes and gave them
     * back once, and that the JDK's direct pool did not move. Both figures belong to the whole JVM: a buffer
     * of an earlier test freed by GC meanwhile moves them too. A miscounted buffer would fail every attempt,
     * so one attempt in which every figure is as expected is enough.
     *
     * @return "ok", or the figures of the last attempt
     */
    private static String accountedOutsideTheJdkAndFreedOnce(final int capacity) throws Exception {
        String last = "no attempt";
        for (int attempt = 0; attempt < 10; attempt++) {
            final long before = AgentBuffers.outstandingBytes();
            final long poolBytes = direct().getMemoryUsed();
            final long poolCount = direct().getCount();
            final ByteBuffer b = AgentBuffers.allocate(capacity);
            final long taken = AgentBuffers.outstandingBytes() - before;
            final long poolMoved = direct().getMemoryUsed() - poolBytes;
            final long countMoved = direct().getCount() - poolCount;
            invokeCleaner(b);
            final long afterFree = AgentBuffers.outstandingBytes() - before;
            invokeCleaner(b); // the cleaner has run: nothing more
            final long afterSecondFree = AgentBuffers.outstandingBytes() - before;
            if (taken == capacity && poolMoved == 0 && countMoved == 0 && afterFree == 0 && afterSecondFree == 0) {
                return "ok";
            }
            last = "outstanding +" + taken + ", direct pool +" + poolMoved + " bytes +" + countMoved
                + " buffers, after the free " + afterFree + ", after the second free " + afterSecondFree;
        }
        return last;
    }

    @Test
    void beyondTheLimitOrNothingAskedTheJdksPathAnswers() throws Exception {
        assertThat(AgentBuffers.allocate(0)).isNull();
        assertThat(AgentBuffers.allocate(-1)).isNull();
        assertThat(AgentBuffers.allocate((int) AgentBuffers.LIMIT_BYTES + 1)).isNull();
        final List<ByteBuffer> held = new ArrayList<>();
        try {
            ByteBuffer b;
            while ((b = AgentBuffers.allocate(64 * 1024)) != null) {
                held.add(b);
            }
            assertThat(AgentBuffers.outstandingBytes()).isLessThanOrEqualTo(AgentBuffers.LIMIT_BYTES)
                .isGreaterThan(AgentBuffers.LIMIT_BYTES - 64 * 1024);
            assertThat(held).isNotEmpty();
        } finally {
            for (final ByteBuffer h : held) {
                invokeCleaner(h);
            }
        }
        assertThat(AgentBuffers.allocate(64 * 1024)).as("room again").isNotNull();
    }
}
