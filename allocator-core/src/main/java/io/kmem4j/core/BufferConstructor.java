package io.kmem4j.core;

import java.nio.ByteBuffer;

/**
 * Builds the buffer object over a block: {@link JdkInternals#newDirectBuffer} (the JDK's mapped-buffer
 * constructor) in production. Passed to {@link SlabAllocator}'s package-private constructor so tests
 * can make construction fail (a heap {@code OutOfMemoryError}, a throwing method handle) at no cost
 * to anyone else: one implementation is ever loaded outside tests, so the call inlines like a direct one.
 */
@FunctionalInterface
interface BufferConstructor {
    /**
     * @param capacity bytes
     * @param address  the block
     * @param hook     the release hook (the JDK cleaner's thunk), or {@code null} for no cleaner
     * @return a root direct buffer over {@code [address, address + capacity)}
     */
    ByteBuffer newBuffer(int capacity, long address, Runnable hook);
}
