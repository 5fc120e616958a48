/**
 * {@code presets=netty-allocator}: Netty's pooled and adaptive allocators hand out kmem4j's explicit
 * (no-cleaner) blocks for the sizes kmem4j serves. The {@link io.kmem4j.agent.netty.NettyTransformer}
 * puts a prologue in front of their {@code newDirectBuffer}; the prologue
 * asks {@link io.kmem4j.agent.netty.NettyBuffers} through the bridge's {@code nettyBuffer}
 * field; a {@link io.kmem4j.agent.netty.NettyCopy} per copy of Netty defines the buffer class
 * (a subclass of Netty's own unpooled direct buffer) whose release and growth hooks give the block back
 * and take new ones. Design and evidence: {@code docs/netty-allocator-design.md}.
 */
package io.kmem4j.agent.netty;
