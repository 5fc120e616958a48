/**
 * {@code excludeCallers}: classes whose {@code ByteBuffer.allocateDirect} call sites are rewritten to
 * the JDK's own body ({@link io.kmem4j.agent.exclude.CallerExclusion}).
 */
package io.kmem4j.agent.exclude;
