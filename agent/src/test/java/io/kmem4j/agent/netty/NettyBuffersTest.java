package io.kmem4j.agent.netty;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.ByteBuffer;

import io.kmem4j.core.SlabAllocator;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.PooledByteBufAllocator;
import io.kmem4j.core.SlabAllocatorConfig;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/** The hook's answers outside Netty (the IT covers Netty 4.1 and 4.2 themselves). */
class NettyBuffersTest {
    private final SlabAllocator allocator = new SlabAllocator(NettyBuffers.configFor(
        SlabAllocatorConfig.builder().chunkSizeBytes(4 << 20).build())); // 256 KiB classes, whatever the test JVM's limit
    private final NettyBuffers hook = new NettyBuffers(allocator, null);

    @AfterEach
    void close() {
        allocator.close();
    }

    @Test
    void theAllocatorBehindNettyHasTheAgentsSettingsAndNoZeroing() {
        final SlabAllocatorConfig agent = SlabAllocatorConfig.builder().magazineRounds(7).siteSampleRate(3).chunkSizeBytes(4 << 20)
            .siteFramesToSkip(java.util.List.of("io.netty.buffer.")).build();
        final SlabAllocatorConfig netty = NettyBuffers.configFor(agent);
        final java.util.Map<String, String> expected = new java.util.LinkedHashMap<>(agent.asMap());
        expected.put("maxSizeClassBytes", "262144"); // nettyMaxSizeClassBytes' default
        assertThat(netty.asMap()).isEqualTo(expected);
        assertThat(netty.siteFramesToSkip()).isEqualTo(agent.siteFramesToSkip());
        assertThat(netty.zeroing()).isFalse();
        assertThat(agent.zeroing()).isTrue();
    }

    @Test
    void anObjectThatIsNoNettyAllocatorGetsNothingAndNothingIsTaken() {
        assertThat(hook.apply(new Object(), capacities(256, Integer.MAX_VALUE))).isNull();
        assertThat(hook.buffersPassed.sum()).isEqualTo(1);
        assertThat(hook.copies).as("not a copy of Netty").isEmpty();
        assertThat(hook.copiesLeftAlone.sum()).isZero();
        assertThat(hook.failures()).isZero();
        assertThat(allocator.stats().liveBuffers()).as("no block taken for a request that is not served").isZero();
    }

    @Test
    void sizesKmem4jDoesNotServeAreNettysWithoutLookingFurther() {
        final PooledByteBufAllocator netty = new PooledByteBufAllocator(true);
        assertThat(hook.apply(netty, capacities(allocator.maxCapacity() + 1, Integer.MAX_VALUE))).isNull();
        assertThat(hook.grow(allocator.maxCapacity() + 1)).isNull();
        assertThat(hook.buffersPassed.sum()).isEqualTo(1);
        assertThat(hook.copies).as("the allocator's class was not even looked at").isEmpty();
        assertThat(allocator.stats().allocations()).as("no block taken").isZero();
        final Object served = hook.apply(netty, capacities(allocator.maxCapacity(), Integer.MAX_VALUE));
        assertThat(served).as("the largest class is served (control)").isInstanceOf(ByteBuf.class);
        assertThat(((ByteBuf) served).release()).isTrue();
        assertThat(allocator.stats().liveBuffers()).as("kept for this thread's next buffer of its class").isEqualTo(1);
        assertThat(hook.giveBackKept()).isEqualTo(1);
        assertThat(allocator.stats().liveBuffers()).isZero();
    }

    /** A kept buffer whose reset throws: a {@code Kmem4jDirectByteBuf} stand-in over a block of the allocator. */
    private static final class FailingReset implements java.util.function.Supplier<ByteBuffer>, java.util.function.LongFunction<Object> {
        private final ByteBuffer block;

        FailingReset(final ByteBuffer block) {
            this.block = block;
        }

        @Override
        public ByteBuffer get() {
            return block;
        }

        @Override
        public Object apply(final long capacities) {
            throw new IllegalStateException("reset failed");
        }
    }

    @Test
    void aKeptBufferWhoseResetFailsGoesBackAndItsCountsNeverStepBack() {
        final PooledByteBufAllocator netty = new PooledByteBufAllocator(true);
        final ByteBuffer block = allocator.allocateExplicit(256);
        assertThat(hook.apply(netty, capacities(256, Integer.MAX_VALUE))).as("this thread now keeps what it releases")
            .isInstanceOf(ByteBuf.class).extracting(b -> ((ByteBuf) b).release()).isEqualTo(true);
        assertThat(hook.giveBackKept()).isEqualTo(1);
        final long buffers = hook.buffers();
        final long releases = hook.releases();
        assertThat(hook.recycle(new FailingReset(block), netty)).as("kept").isTrue();
        assertThat(hook.releases()).isEqualTo(releases + 1);

        assertThat(hook.apply(netty, capacities(256, Integer.MAX_VALUE))).as("Netty's own after the failure").isNull();
        assertThat(hook.failures()).isEqualTo(1);
        assertThat(hook.buffersPassed.sum()).isEqualTo(1);
        assertThat(hook.reused()).as("served again, then its block went back: counted, never taken back").isEqualTo(1);
        assertThat(hook.buffers()).isEqualTo(buffers + 1);
        assertThat(hook.releases()).as("and released").isEqualTo(releases + 2);
        assertThat(allocator.stats().liveBuffers()).as("the block went back to kmem4j").isZero();
        assertThat(allocator.stats().doubleFrees()).isZero();
    }

    @Test
    void aBlockGoesBackOnceAndNettysOwnBuffersAreNotTouched() {
        final ByteBuffer block = hook.grow(4096);
        assertThat(block).isNotNull();
        assertThat(hook.grown.sum()).isEqualTo(1);
        assertThat(hook.release(ByteBuffer.allocateDirect(4096))).as("Netty's own: its own free runs").isFalse();
        assertThat(hook.release(ByteBuffer.allocate(16))).isFalse();
        assertThat(hook.release(block)).isTrue();
        assertThat(allocator.stats().liveBuffers()).isZero();
        assertThat(hook.release(block)).as("a block already back is not kmem4j's any more").isFalse();
        assertThat(hook.releases()).isEqualTo(1);
        assertThat(allocator.stats().doubleFrees()).isZero();
    }

    @Test
    void afterStoppingNothingIsServedButBlocksStillComeBack() {
        final PooledByteBufAllocator netty = new PooledByteBufAllocator(true);
        final ByteBuf before = (ByteBuf) hook.apply(netty, capacities(100, 1000));
        assertThat(before).as("served before stopping (control)").isNotNull();
        assertThat(before.maxCapacity()).isEqualTo(1000);
        final ByteBuffer block = hook.grow(100);
        hook.stopAllocating();
        assertThat(hook.grow(100)).isNull();
        assertThat(hook.apply(netty, capacities(100, 1000))).isNull();
        assertThat(allocator.stats().liveBuffers()).isEqualTo(2);
        assertThat(hook.release(block)).isTrue();
        assertThat(before.release()).as("a buffer served before stopping still goes back").isTrue();
        assertThat(allocator.stats().liveBuffers()).isZero();
    }

    private static Long capacities(final int initial, final int max) {
        return (long) max << 32 | (initial & 0xFFFF_FFFFL);
    }
}
