package io.kmem4j.agent.netty;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

class NettyTransformerTest {

    @Test
    void recognisesNettysPooledAndAdaptiveAllocatorsUnderAnyRelocation() {
        assertThat(NettyTransformer.rewrites("io/netty/buffer/PooledByteBufAllocator")).isTrue();
        assertThat(NettyTransformer.rewrites("io/netty/buffer/AdaptiveByteBufAllocator")).isTrue();
        assertThat(NettyTransformer.rewrites("io/grpc/netty/shaded/io/netty/buffer/PooledByteBufAllocator")).isTrue();
    }

    @Test
    void leavesEverythingElseAlone() {
        assertThat(NettyTransformer.rewrites("io/netty/buffer/UnpooledByteBufAllocator"))
            .as("unpooled users may rely on GC for buffers they never release").isFalse();
        assertThat(NettyTransformer.rewrites("io/netty/buffer/PooledByteBufAllocatorMetric")).isFalse();
        assertThat(NettyTransformer.rewrites("com/acme/shaded/io/netty/buffer/PooledByteBufAllocator"))
            .as("any relocation that keeps io/netty/buffer/ whole").isTrue();
        assertThat(NettyTransformer.rewrites("com/acme/myio/netty/buffer/PooledByteBufAllocator")).isFalse();
        assertThat(NettyTransformer.rewrites("com/acme/MyPooledByteBufAllocator")).isFalse();
    }
}
