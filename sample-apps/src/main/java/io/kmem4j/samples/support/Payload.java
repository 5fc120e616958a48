package io.kmem4j.samples.support;

import java.nio.ByteBuffer;

/**
 * Deterministic test content: a byte sequence named by a 64-bit seed, so that a reader can verify
 * every byte without a copy of what was written.
 *
 * <p>The sequence is made of 8-byte words, word {@code k} being a SplitMix64 mix of {@code seed} and
 * {@code k}, stored big-endian: byte {@code p} of the sequence is byte {@code p % 8} (most
 * significant first) of word {@code p / 8}. Writers and readers therefore move whole {@code long}s
 * with the buffer's absolute {@code putLong}/{@code getLong}, which requires the buffer's default
 * big-endian order, and handle a tail of fewer than 8 bytes byte by byte.
 *
 * <p>Stateless; safe to use from any thread. Buffer positions and limits are never changed: all
 * methods take absolute offsets.
 */
public final class Payload {

    private static final long GOLDEN_GAMMA = 0x9E3779B97F4A7C15L;

    private Payload() {}

    /** SplitMix64's finalizer: a bijection of {@code long}s that spreads every input bit. */
    public static long mix(long z) {
        z = (z ^ (z >>> 30)) * 0xBF58476D1CE4E5B9L;
        z = (z ^ (z >>> 27)) * 0x94D049BB133111EBL;
        return z ^ (z >>> 31);
    }

    /** Derives a seed from two values, e.g. a producer and an item index. */
    public static long seed(long a, long b) {
        return mix(mix(a + GOLDEN_GAMMA) + b * GOLDEN_GAMMA);
    }

    /** Word {@code index} of the sequence named {@code seed}. */
    public static long word(long seed, long index) {
        return mix(seed + (index + 1) * GOLDEN_GAMMA);
    }

    /** Byte {@code position} of the sequence named {@code seed}. */
    public static byte byteAt(long seed, long position) {
        return (byte) (word(seed, position >>> 3) >>> ((7 - (position & 7)) << 3));
    }

    /**
     * Writes bytes {@code 0 .. length-1} of the sequence to {@code dst[offset .. offset+length)}.
     *
     * @throws IndexOutOfBoundsException if the range exceeds the buffer's limit
     */
    public static void fill(ByteBuffer dst, int offset, int length, long seed) {
        fill(dst, offset, length, seed, 0);
    }

    /**
     * Writes bytes {@code from .. from+length-1} of the sequence to {@code dst[offset ..
     * offset+length)}; {@code from} must be a multiple of 8 (a chunk of a longer sequence).
     *
     * @throws IllegalArgumentException if {@code from} is not a multiple of 8
     */
    public static void fill(ByteBuffer dst, int offset, int length, long seed, long from) {
        if ((from & 7) != 0) {
            throw new IllegalArgumentException("not a multiple of 8: from=" + from);
        }
        long firstWord = from >>> 3;
        int words = length >>> 3;
        for (int k = 0; k < words; k++) {
            dst.putLong(offset + (k << 3), word(seed, firstWord + k));
        }
        for (int i = words << 3; i < length; i++) {
            dst.put(offset + i, byteAt(seed, from + i));
        }
    }

    /**
     * Compares {@code src[offset .. offset+length)} with bytes {@code 0 .. length-1} of the
     * sequence.
     *
     * @return the number of bytes that differ
     */
    public static long countMismatches(ByteBuffer src, int offset, int length, long seed) {
        long mismatches = 0;
        int words = length >>> 3;
        for (int k = 0; k < words; k++) {
            long diff = src.getLong(offset + (k << 3)) ^ word(seed, k);
            if (diff != 0) {
                mismatches += differingBytes(diff);
            }
        }
        for (int i = words << 3; i < length; i++) {
            if (src.get(offset + i) != byteAt(seed, i)) {
                mismatches++;
            }
        }
        return mismatches;
    }

    /** The number of non-zero bytes of {@code diff}. */
    public static int differingBytes(long diff) {
        int n = 0;
        for (long d = diff; d != 0; d >>>= 8) {
            if ((d & 0xFF) != 0) {
                n++;
            }
        }
        return n;
    }
}
