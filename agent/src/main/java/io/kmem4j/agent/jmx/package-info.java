/**
 * The MXBeans an operator reads in jconsole: {@code kmem4j:type=Allocator}, one
 * {@code kmem4j:type=SlabCache,name=...} per size class, and {@code kmem4j:type=Pools}; every attribute an
 * open type, every bean reading one statistics snapshot per refresh; and
 * {@link io.kmem4j.agent.jmx.Kmem4jBufferPool}, kmem4j as {@code java.nio:type=BufferPool,name=kmem4j} among the
 * platform's buffer pools; {@link io.kmem4j.agent.jmx.Slabinfo}
 * formats the {@code /proc/slabinfo}-style table.
 */
package io.kmem4j.agent.jmx;
