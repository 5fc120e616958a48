package io.kmem4j.core;

import java.util.Arrays;

/**
 * The size classes: multiples of the 64-byte cache line up to 512 B, then four classes per
 * doubling (640, 768, 896, 1024, 1280, ...), up to the configured largest class.
 *
 * <pre>
 *   class size  64 128 192 256 320 384 448 512 | 640 768 896 1024 | 1280 1536 1792 2048 | ... 65536
 *   step        ------------ 64 --------------- | ------ 128 ------ | ------- 256 ------- | ...
 * </pre>
 *
 * <p>Every class is a multiple of 64, so objects of 64 B and more start on a cache line and two
 * buffers never share one. From 193 B on, internal waste is at most 25% of the class size
 * ({@code (class - request) / class}); from 65 B to 192 B the cache-line rule forces a 64 B step and
 * waste can reach 49% (65 B in the 128 B class). Requests below 64 B use the 64 B class.
 *
 * <p>Lookup is one array load indexed by {@code (capacity + 63) >>> 6}. Instances are immutable.
 */
final class SizeClasses {
    static final int MIN_CLASS_BYTES = 64;
    /** Slabs hold at least this many objects (fewer only when one object exceeds a chunk's share). */
    static final int MIN_OBJECTS_PER_SLAB = 8;
    /** A slab spans at most 64 pages (4 MiB), so one word of a chunk's page bitmap holds it. */
    static final int MAX_SLAB_PAGES = 64;

    private final int[] sizes;
    private final byte[] classOfLine; // index: (capacity + 63) >>> 6

    SizeClasses(final int maxClassBytes) {
        int[] s = new int[64];
        int n = 0;
        for (int size = 64; size <= 512; size += 64) {
            s[n++] = size;
        }
        for (int base = 512; s[n - 1] < maxClassBytes; base <<= 1) {
            for (int k = 1; k <= 4 && s[n - 1] < maxClassBytes; k++) {
                s[n++] = base + k * (base >>> 2);
            }
        }
        int count = n;
        while (count > 1 && s[count - 2] >= maxClassBytes) {
            count--;
        }
        this.sizes = Arrays.copyOf(s, count);
        this.classOfLine = new byte[(sizes[count - 1] >>> 6) + 1];
        int c = 0;
        for (int line = 0; line < classOfLine.length; line++) {
            while ((sizes[c] >>> 6) < line) {
                c++;
            }
            classOfLine[line] = (byte) c;
        }
    }

    /** @return the number of classes. */
    int count() {
        return sizes.length;
    }

    /** @return object size of class {@code index}, bytes. */
    int size(final int index) {
        return sizes[index];
    }

    /** @return the largest class size, bytes. */
    int largest() {
        return sizes[sizes.length - 1];
    }

    /** @return the class serving {@code capacity}; {@code 0 <= capacity <= largest()}. */
    int indexOf(final int capacity) {
        return classOfLine[(capacity + 63) >>> 6];
    }

    /**
     * Pages (of {@link SlabAllocatorConfig#PAGE_SIZE_BYTES}) in a slab of {@code objectSize}: a power
     * of two large enough for {@link #MIN_OBJECTS_PER_SLAB} objects, at most {@link #MAX_SLAB_PAGES}.
     */
    static int slabPages(final int objectSize) {
        final long bytes = (long) objectSize * MIN_OBJECTS_PER_SLAB;
        final long pages = (bytes + SlabAllocatorConfig.PAGE_SIZE_BYTES - 1) / SlabAllocatorConfig.PAGE_SIZE_BYTES;
        final int rounded = pages <= 1 ? 1 : Integer.highestOneBit((int) pages - 1) << 1;
        return Math.min(rounded, MAX_SLAB_PAGES);
    }
}
