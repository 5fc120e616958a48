package io.kmem4j.core;

import java.nio.ByteBuffer;
import java.util.Objects;

import org.agrona.BufferUtil;
import org.agrona.UnsafeApi;

/**
 * Buffer identity and the release entry points of root buffers: which buffers are this allocator's,
 * which are of the explicit (no-cleaner) flavour, and their release with exactly-once semantics.
 *
 * <p>An explicit buffer has no JDK cleaner; its identity is its address field. A release clears that
 * field with one CAS ({@code address -> 0}), so of two racing releases exactly one wins and the
 * other is counted as a double free; a buffer whose address is 0 is already released (or detached,
 * see {@link #detach}). A root buffer the allocator did not hand out is refused unless its memory,
 * capacity and the slab's bitmap all say it could be one ({@link Slab#mayBeHandedOut}).
 *
 * <p>Threads: any. The lookups read only this allocator's tables ({@link ChunkMap}: a volatile
 * array), never the memory at a foreign address.
 */
final class ExplicitBuffers {
    private static final long ADDRESS_OFFSET = BufferUtil.BYTE_BUFFER_ADDRESS_FIELD_OFFSET;

    private final SlabAllocator allocator;
    private final PageHeap pages;
    private final SizeClasses classes;
    private final LeakDetector leakDetector;
    private final SiteSampler sampler;
    private final Accounting accounting;

    ExplicitBuffers(final SlabAllocator allocator, final PageHeap pages, final SizeClasses classes,
                    final LeakDetector leakDetector, final SiteSampler sampler, final Accounting accounting) {
        this.allocator = allocator;
        this.pages = pages;
        this.classes = classes;
        this.leakDetector = leakDetector;
        this.sampler = sampler;
        this.accounting = accounting;
    }

    /** {@link SlabAllocator#freeOnce(ByteBuffer)}: see there for the contract. */
    boolean freeOnce(final ByteBuffer buffer) {
        Objects.requireNonNull(buffer, "buffer");
        if (!buffer.isDirect() || !JdkInternals.isDirectByteBuffer(buffer)) {
            throw new IllegalArgumentException("not a direct buffer: " + buffer);
        }
        if (JdkInternals.attachment(buffer) != null) {
            throw new IllegalArgumentException("duplicate or slice");
        }
        if (JdkInternals.cleaner(buffer) != null) {
            UnsafeApi.invokeCleaner(buffer);
            return true;
        }
        final long address = UnsafeApi.getLongVolatile(buffer, ADDRESS_OFFSET);
        if (address == 0) {
            accounting.doubleFrees.increment(); // already freed: its address was cleared
            return false;
        }
        return freeFound(buffer, address, pages.map.find(address));
    }

    /** {@link SlabAllocator#freeIfExplicit(ByteBuffer)}: see there for the contract. */
    boolean freeIfExplicit(final ByteBuffer buffer) {
        if (buffer == null || !buffer.isDirect() || !JdkInternals.isDirectByteBuffer(buffer)
            || JdkInternals.attachment(buffer) != null || JdkInternals.cleaner(buffer) != null) {
            return false;
        }
        final long address = UnsafeApi.getLongVolatile(buffer, ADDRESS_OFFSET);
        final Chunk c = address == 0 ? null : pages.map.find(address);
        if (c == null) {
            return false;
        }
        freeFound(buffer, address, c); // false: a racing free won, counted; the buffer was this allocator's either way
        return true;
    }

    /**
     * The release of an explicit root whose address was {@code address} when read, in chunk {@code c}
     * (null: in none of this allocator's): exactly once, by the CAS that clears the address.
     */
    private boolean freeFound(final ByteBuffer buffer, final long address, final Chunk c) {
        final Slab s = c == null ? null : c.slabs[c.pageOf(address)];
        if (s == null || !s.mayBeHandedOut(address, buffer.capacity(), classes)) {
            if (UnsafeApi.getLongVolatile(buffer, ADDRESS_OFFSET) == 0) {
                accounting.doubleFrees.increment(); // a racing free won, and its block is back in its slab already
                return false;
            }
            throw new IllegalArgumentException("not a buffer of this allocator: " + buffer);
        }
        if (!UnsafeApi.compareAndSetLong(buffer, ADDRESS_OFFSET, address, 0L)) {
            accounting.doubleFrees.increment(); // a racing free won
            return false;
        }
        if (leakDetector != null) {
            leakDetector.untrack(address);
        }
        if (sampler != null) {
            sampler.releasedExplicit(address, buffer.capacity());
        }
        allocator.release(address, buffer.capacity(), c);
        return true;
    }

    /** {@link SlabAllocator#detach(ByteBuffer)}. */
    long detach(final ByteBuffer buffer) {
        if (buffer != null && buffer.isDirect() && JdkInternals.isDirectByteBuffer(buffer)
            && JdkInternals.attachment(buffer) == null && JdkInternals.cleaner(buffer) == null
            && UnsafeApi.getLongVolatile(buffer, ADDRESS_OFFSET) == 0) {
            return 0L; // an explicit root already released or detached: nothing to take
        }
        if (!isExplicit(buffer)) {
            throw new IllegalArgumentException("not an explicit buffer of this allocator: " + buffer);
        }
        final long address = UnsafeApi.getLongVolatile(buffer, ADDRESS_OFFSET);
        return address != 0 && UnsafeApi.compareAndSetLong(buffer, ADDRESS_OFFSET, address, 0L) ? address : 0L;
    }

    /** {@link SlabAllocator#reattach(ByteBuffer, long)}. */
    void reattach(final ByteBuffer buffer, final long address) {
        if (address == 0 || !UnsafeApi.compareAndSetLong(buffer, ADDRESS_OFFSET, 0L, address)) {
            throw new IllegalStateException("not detached: " + buffer + " (address " + address + ")");
        }
    }

    /** {@link SlabAllocator#owns(ByteBuffer)}. */
    boolean owns(final ByteBuffer buffer) {
        if (buffer == null || !buffer.isDirect() || !JdkInternals.isDirectByteBuffer(buffer)
            || JdkInternals.attachment(buffer) != null) {
            return false;
        }
        return pages.map.find(BufferUtil.address(buffer)) != null;
    }

    /** {@link SlabAllocator#isExplicit(ByteBuffer)}. */
    boolean isExplicit(final ByteBuffer buffer) {
        return owns(buffer) && JdkInternals.cleaner(buffer) == null;
    }

    /** {@link SlabAllocator#ownsMemoryOf(ByteBuffer)}. */
    boolean ownsMemoryOf(final ByteBuffer buffer) {
        if (buffer == null || !buffer.isDirect() || !JdkInternals.isDirectByteBuffer(buffer)) {
            return false;
        }
        final long address = BufferUtil.address(buffer);
        return address != 0 && pages.map.find(address) != null;
    }
}
