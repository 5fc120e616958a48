package io.kmem4j.core;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.List;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

class SizeClassesTest {
    private static final int DEFAULT_MAX = 65536;

    private static List<Integer> sizes(final SizeClasses c) {
        final List<Integer> out = new ArrayList<>();
        for (int i = 0; i < c.count(); i++) {
            out.add(c.size(i));
        }
        return out;
    }

    @Test
    void defaultClassListIsExact() {
        final SizeClasses c = new SizeClasses(DEFAULT_MAX);

        assertThat(sizes(c)).containsExactly(
            64, 128, 192, 256, 320, 384, 448, 512,
            640, 768, 896, 1024,
            1280, 1536, 1792, 2048,
            2560, 3072, 3584, 4096,
            5120, 6144, 7168, 8192,
            10240, 12288, 14336, 16384,
            20480, 24576, 28672, 32768,
            40960, 49152, 57344, 65536);
        assertThat(c.count()).isEqualTo(36);
        assertThat(c.largest()).isEqualTo(65536);
    }

    @ParameterizedTest
    @ValueSource(ints = {64, 100, 1000, 65536, 1 << 20})
    void everyClassIsAMultipleOf64AndStrictlyIncreasing(final int max) {
        final SizeClasses c = new SizeClasses(max);
        for (int i = 0; i < c.count(); i++) {
            assertThat(c.size(i) % SizeClasses.MIN_CLASS_BYTES).as("class %d = %d", i, c.size(i)).isZero();
            if (i > 0) {
                assertThat(c.size(i)).as("class %d", i).isGreaterThan(c.size(i - 1));
            }
        }
        assertThat(c.size(0)).isEqualTo(64);
    }

    @Test
    void indexOfGivesTheSmallestClassThatFitsForEveryCapacity() {
        final SizeClasses c = new SizeClasses(DEFAULT_MAX);
        int expected = 0;
        for (int cap = 0; cap <= DEFAULT_MAX; cap++) {
            final int need = Math.max(cap, 1);
            while (c.size(expected) < need) {
                expected++;
            }
            final int idx = c.indexOf(cap);
            if (idx != expected) {
                // only build the message when failing (the loop runs 65537 times)
                assertThat(idx).as("indexOf(%d): class %d (%d B), expected class %d (%d B)",
                    cap, idx, c.size(idx), expected, c.size(expected)).isEqualTo(expected);
            }
        }
    }

    @Test
    void indexOfBoundaries() {
        final SizeClasses c = new SizeClasses(DEFAULT_MAX);
        assertThat(c.indexOf(0)).isZero();
        assertThat(c.indexOf(1)).isZero();
        assertThat(c.indexOf(64)).isZero();
        assertThat(c.indexOf(65)).isEqualTo(1);
        assertThat(c.size(c.indexOf(512))).isEqualTo(512);
        assertThat(c.size(c.indexOf(513))).isEqualTo(640);
        assertThat(c.size(c.indexOf(1025))).isEqualTo(1280);
        assertThat(c.size(c.indexOf(65535))).isEqualTo(65536);
        assertThat(c.indexOf(65536)).isEqualTo(c.count() - 1);
    }

    @Test
    void internalWasteIsAtMostAQuarterFrom193Bytes() {
        final SizeClasses c = new SizeClasses(DEFAULT_MAX);
        double worst = 0;
        for (int cap = 193; cap <= DEFAULT_MAX; cap++) {
            final int cls = c.size(c.indexOf(cap));
            final double waste = (double) (cls - cap) / cls;
            if (waste > 0.25) {
                assertThat(waste).as("waste of %d in class %d", cap, cls).isLessThanOrEqualTo(0.25);
            }
            worst = Math.max(worst, waste);
        }
        // 193 B in the 256 B class is the worst case: 63/256
        assertThat(worst).isEqualTo(63.0 / 256);
        // below 193 B the cache-line rule allows more (65 B in 128 B is 49%)
        assertThat(c.size(c.indexOf(65))).isEqualTo(128);
    }

    @Test
    void configuredMaximaRoundUpToAClass() {
        assertThat(sizes(new SizeClasses(64))).containsExactly(64);
        assertThat(sizes(new SizeClasses(100))).containsExactly(64, 128);
        assertThat(sizes(new SizeClasses(512))).containsExactly(64, 128, 192, 256, 320, 384, 448, 512);
        assertThat(sizes(new SizeClasses(513))).containsExactly(64, 128, 192, 256, 320, 384, 448, 512, 640);
        assertThat(new SizeClasses(1000).largest()).isEqualTo(1024);
        assertThat(new SizeClasses(1 << 20).largest()).isEqualTo(1 << 20);
        assertThat(new SizeClasses(1 << 20).count()).isEqualTo(8 + 4 * 11);
        assertThat(new SizeClasses((1 << 20) - 1).largest()).isEqualTo(1 << 20);
    }

    @ParameterizedTest
    @ValueSource(ints = {64, 65, 100, 192, 193, 512, 513, 1000, 1024, 40000, 65536, 65537, 1 << 20})
    void largestIsTheSmallestClassAtLeastMax(final int max) {
        final SizeClasses c = new SizeClasses(max);
        assertThat(c.largest()).isGreaterThanOrEqualTo(max);
        if (c.count() > 1) {
            assertThat(c.size(c.count() - 2)).as("second largest class for max %d", max).isLessThan(max);
        }
        // the lookup table covers every capacity up to the largest class
        assertThat(c.indexOf(c.largest())).isEqualTo(c.count() - 1);
        assertThat(c.indexOf(max)).isEqualTo(c.count() - 1);
    }

    @Test
    void slabPagesExamples() {
        assertThat(SizeClasses.slabPages(64)).isEqualTo(1);
        assertThat(SizeClasses.slabPages(8192)).isEqualTo(1);
        assertThat(SizeClasses.slabPages(8193)).isEqualTo(2);
        assertThat(SizeClasses.slabPages(10240)).isEqualTo(2);
        assertThat(SizeClasses.slabPages(20480)).isEqualTo(4);
        assertThat(SizeClasses.slabPages(40960)).isEqualTo(8);
        assertThat(SizeClasses.slabPages(65536)).isEqualTo(8);
        assertThat(SizeClasses.slabPages(512 << 10)).isEqualTo(64);
        assertThat(SizeClasses.slabPages(640 << 10)).isEqualTo(64);
        assertThat(SizeClasses.slabPages(1 << 20)).isEqualTo(64);
    }

    @Test
    void slabPagesArePowersOfTwoHoldEightObjectsWherePossibleAndAreMinimal() {
        final SizeClasses c = new SizeClasses(1 << 20);
        final int page = SlabAllocatorConfig.PAGE_SIZE_BYTES;
        for (int i = 0; i < c.count(); i++) {
            final int size = c.size(i);
            final int pages = SizeClasses.slabPages(size);
            assertThat(Integer.bitCount(pages)).as("pages for %d", size).isEqualTo(1);
            assertThat(pages).as("pages for %d", size).isBetween(1, SizeClasses.MAX_SLAB_PAGES);
            final long objects = (long) pages * page / size;
            final boolean possible = (long) size * SizeClasses.MIN_OBJECTS_PER_SLAB
                <= (long) SizeClasses.MAX_SLAB_PAGES * page;
            if (possible) {
                assertThat(objects).as("objects per slab of %d", size)
                    .isGreaterThanOrEqualTo(SizeClasses.MIN_OBJECTS_PER_SLAB);
                if (pages > 1) {
                    // half as many pages would not hold 8 objects: the power of two is the smallest
                    assertThat((long) (pages / 2) * page / size).as("half slab of %d", size)
                        .isLessThan(SizeClasses.MIN_OBJECTS_PER_SLAB);
                }
            } else {
                assertThat(pages).as("pages for %d", size).isEqualTo(SizeClasses.MAX_SLAB_PAGES);
                assertThat(objects).as("objects per slab of %d", size).isGreaterThanOrEqualTo(1);
            }
        }
    }

    /** Slab.indexOf divides by multiplying: exact for every object size and every offset inside a slab. */
    @org.junit.jupiter.api.Test
    void theSlabIndexMagicDividesExactlyForEveryClassAndOffset() {
        final SizeClasses classes = new SizeClasses(1 << 20);
        for (int c = 0; c < classes.count(); c++) {
            final int size = classes.size(c);
            final long magic = ((1L << SlabCache.INDEX_SHIFT) + size - 1) / size;
            final long slabBytes = (long) SizeClasses.slabPages(size) * SlabAllocatorConfig.PAGE_SIZE_BYTES;
            for (long offset = 0; offset < slabBytes; offset += 8) {
                final long expected = offset / size;
                final long actual = (offset * magic) >>> SlabCache.INDEX_SHIFT;
                if (actual != expected) {
                    org.assertj.core.api.Assertions.fail("size %d offset %d: %d, not %d", size, offset, actual, expected);
                }
            }
        }
    }
}
