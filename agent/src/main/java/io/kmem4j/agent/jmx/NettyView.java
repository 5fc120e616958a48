package io.kmem4j.agent.jmx;

import java.util.List;

import io.kmem4j.agent.netty.NettyBuffers;
import io.kmem4j.agent.netty.NettyTransformer;

/** The {@code kmem4j:type=Netty} bean over {@link NettyBuffers} and {@link NettyTransformer}. */
public final class NettyView implements NettyMXBean {
    /**
     * The Allocator bean of Netty's buffers is {@code kmem4j:type=Allocator,name=netty}, its caches
     * {@code kmem4j:type=SlabCache,allocator=netty,name=<cache>}.
     */
    public static final String ALLOCATOR_KEY = "netty";
    private final NettyBuffers buffers;
    private final NettyTransformer transformer;

    public NettyView(final NettyBuffers buffers, final NettyTransformer transformer) {
        this.buffers = buffers;
        this.transformer = transformer;
    }

    /** The hook behind the bean (the agent's shutdown hook stops its allocations). */
    public NettyBuffers buffers() {
        return buffers;
    }

    @Override
    public long getBuffers() {
        return buffers.buffers();
    }

    @Override
    public long getBuffersReused() {
        return buffers.reused();
    }

    @Override
    public long getBytesKeptForReuse() {
        return buffers.keptBytes();
    }

    @Override
    public long getBuffersPassed() {
        return buffers.buffersPassed.sum();
    }

    @Override
    public long getGrown() {
        return buffers.grown.sum();
    }

    @Override
    public long getReleases() {
        return buffers.releases();
    }

    @Override
    public List<String> getCopies() {
        return List.copyOf(buffers.copies);
    }

    @Override
    public long getCopiesLeftAlone() {
        return buffers.copiesLeftAlone.sum();
    }

    @Override
    public long getRewrittenMethods() {
        return transformer.rewrittenMethods.sum();
    }

    @Override
    public long getFailures() {
        return buffers.failures() + transformer.failures.sum();
    }
}
