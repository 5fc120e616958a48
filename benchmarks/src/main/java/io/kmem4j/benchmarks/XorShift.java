package io.kmem4j.benchmarks;

/**
 * The workloads' random slot picker: xorshift64 (Marsaglia 2003), a few instructions and no
 * allocation, so it adds next to nothing to the operation it picks for. Not thread-safe: one per
 * benchmark thread; a fixed seed gives every allocator the same sequence.
 */
final class XorShift {
    private long state;

    /** @param seed any non-zero value */
    XorShift(final long seed) {
        this.state = seed;
    }

    /** @return the next 64 random bits. */
    long next() {
        long x = state;
        x ^= x << 13;
        x ^= x >>> 7;
        x ^= x << 17;
        state = x;
        return x;
    }

    /** @return a random value in {@code [0, 2^bits)} (the top bits). */
    int nextBits(final int bits) {
        return (int) (next() >>> (64 - bits));
    }

    /** @return a random value in {@code [0, bound)}. */
    int nextInt(final int bound) {
        return (int) ((next() >>> 1) % bound);
    }
}
