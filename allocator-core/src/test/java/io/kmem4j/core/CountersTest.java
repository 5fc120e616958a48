package io.kmem4j.core;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.stream.Stream;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

class CountersTest {
    private static final int MAX = Counters.MAX_OBJECTS;

    static Stream<Arguments> boundaries() {
        final Stream.Builder<Arguments> b = Stream.builder();
        for (final int id : new int[] {0, 1, 65535}) {
            for (final int objects : new int[] {0, 1, MAX - 1, MAX}) {
                for (final int inuse : new int[] {0, 1, MAX - 1, MAX}) {
                    for (final boolean frozen : new boolean[] {false, true}) {
                        b.add(Arguments.of(id, objects, inuse, frozen));
                    }
                }
            }
        }
        return b.build();
    }

    @Test
    void layoutConstants() {
        assertThat(Counters.MAX_OBJECTS).isEqualTo((1 << 23) - 1);
        assertThat(Counters.INUSE_MASK).isEqualTo(0x7F_FFFFL);
        assertThat(Counters.OBJECTS_SHIFT).isEqualTo(23);
        assertThat(Counters.FROZEN_SHIFT).isEqualTo(46);
        assertThat(Counters.CACHE_ID_SHIFT).isEqualTo(48);
    }

    @ParameterizedTest
    @MethodSource("boundaries")
    void packUnpackRoundTrip(final int id, final int objects, final int inuse, final boolean frozen) {
        final long w = Counters.pack(id, objects, inuse, frozen);
        assertThat(Counters.cacheId(w)).isEqualTo(id);
        assertThat(Counters.objects(w)).isEqualTo(objects);
        assertThat(Counters.inuse(w)).isEqualTo(inuse);
        assertThat(Counters.frozen(w)).isEqualTo(frozen);
        // the reserved bit 47 stays zero
        assertThat(w & (1L << 47)).isZero();
    }

    @ParameterizedTest
    @MethodSource("boundaries")
    void withInuseAndWithFrozenTouchOnlyTheirField(final int id, final int objects, final int inuse,
                                                   final boolean frozen) {
        final long w = Counters.pack(id, objects, inuse, frozen);
        for (final int newInuse : new int[] {0, 1, 12345, MAX}) {
            final long u = Counters.withInuse(w, newInuse);
            assertThat(u).isEqualTo(Counters.pack(id, objects, newInuse, frozen));
            assertThat(Counters.cacheId(u)).isEqualTo(id);
            assertThat(Counters.objects(u)).isEqualTo(objects);
            assertThat(Counters.frozen(u)).isEqualTo(frozen);
            assertThat(Counters.inuse(u)).isEqualTo(newInuse);
        }
        for (final boolean newFrozen : new boolean[] {false, true}) {
            final long f = Counters.withFrozen(w, newFrozen);
            assertThat(f).isEqualTo(Counters.pack(id, objects, inuse, newFrozen));
            assertThat(Counters.frozen(f)).isEqualTo(newFrozen);
            assertThat(Counters.cacheId(f)).isEqualTo(id);
            assertThat(Counters.objects(f)).isEqualTo(objects);
            assertThat(Counters.inuse(f)).isEqualTo(inuse);
        }
        // idempotent
        assertThat(Counters.withFrozen(Counters.withFrozen(w, true), true)).isEqualTo(Counters.withFrozen(w, true));
        assertThat(Counters.withInuse(w, inuse)).isEqualTo(w);
    }

    @Test
    void cacheIdLivesExactlyInBits48To63() {
        assertThat(Counters.pack(65535, 0, 0, false)).isEqualTo(0xFFFF_0000_0000_0000L);
        assertThat(Counters.pack(1, 0, 0, false)).isEqualTo(1L << 48);
        assertThat(Counters.pack(0x8000, 0, 0, false)).isEqualTo(Long.MIN_VALUE);
        // all other fields at their maximum fill bits 0..46 and nothing at or above bit 47
        final long others = Counters.pack(0, MAX, MAX, true);
        assertThat(others).isEqualTo((1L << 47) - 1);
        assertThat(others & 0xFFFF_0000_0000_0000L).isZero();
        // cache id 65535 with a sign bit set still reads back unsigned
        assertThat(Counters.cacheId(Counters.pack(65535, MAX, MAX, true))).isEqualTo(65535);
        assertThat(Counters.cacheId(-1L)).isEqualTo(65535);
        assertThat(Counters.cacheId((1L << 48) - 1)).isZero();
    }

    @Test
    void fieldPositions() {
        assertThat(Counters.pack(0, 0, 1, false)).isEqualTo(1L);
        assertThat(Counters.pack(0, 1, 0, false)).isEqualTo(1L << 23);
        assertThat(Counters.pack(0, 0, 0, true)).isEqualTo(1L << 46);
        assertThat(Counters.pack(0, MAX, 0, false)).isEqualTo(((long) MAX) << 23);
        assertThat(Counters.inuse(Counters.pack(7, MAX, 0, true))).isZero();
        assertThat(Counters.objects(Counters.pack(7, 0, MAX, true))).isZero();
        assertThat(Counters.frozen(Counters.pack(65535, MAX, MAX, false))).isFalse();
    }
}
