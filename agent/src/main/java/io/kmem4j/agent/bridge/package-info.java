/**
 * The bootstrap bridge and the interception of {@code ByteBuffer.allocateDirect}: the tiny
 * JDK-typed class {@code java.nio.Kmem4jBridge} defined inside {@code java.base} at run time
 * ({@link io.kmem4j.agent.bridge.BootstrapBridge}), the advice inlined into {@code allocateDirect},
 * the retransformation that installs it, and the {@link io.kmem4j.agent.bridge.Interceptor} behind
 * the bridge's {@code allocator} field. Threads of the agent's own
 * ({@link io.kmem4j.agent.bridge.AgentThread}) are never served by the slabs: they get
 * {@link io.kmem4j.agent.bridge.AgentBuffers}, outside the application's direct-memory budget.
 * {@link io.kmem4j.agent.bridge.PlatformBufferPool} adds a pool to the JDK's platform list of buffer
 * pools ({@code ManagementFactoryHelper.getBufferPoolMXBeans()}, through the bridge's
 * {@code bufferPools} field).
 */
package io.kmem4j.agent.bridge;
