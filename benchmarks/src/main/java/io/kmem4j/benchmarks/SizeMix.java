package io.kmem4j.benchmarks;

import java.util.SplittableRandom;

/**
 * A realistic mix of buffer sizes: the value sizes of Facebook's memcached "ETC" pool, the most
 * representative of the five traced pools (Atikoglu, Xu, Frachtenberg, Jiang, Paleczny, "Workload
 * Analysis of a Large-Scale Key-Value Store", SIGMETRICS 2012, Table 5: value size follows a
 * generalized Pareto distribution with location 0, scale 214.476 and shape 0.348238; mutilate's
 * {@code fb_value} uses the same model). A cache or proxy in front of such a store holds each value in
 * a buffer of its size.
 *
 * <p>Sizes are drawn once, with a fixed seed, by inverting the CDF
 * {@code x = scale / shape * ((1 - u)^-shape - 1)}, rounded up to at least 1 byte; draws above
 * {@value #MAX_BYTES} bytes (kmem4j's largest size class; about 1 in 10^6) are drawn again. Every
 * allocator sees the same sequence of {@value #COUNT} sizes, cycled. The resulting mix: median about
 * 150 B, mean about 330 B, 99th percentile about 3 KiB.
 */
final class SizeMix {
    /** Largest size, bytes. */
    static final int MAX_BYTES = 64 << 10;
    /** Sizes in the cycled sequence (a power of two). */
    static final int COUNT = 1 << 16;
    static final int MASK = COUNT - 1;
    private static final double SCALE = 214.476;
    private static final double SHAPE = 0.348238;
    private static final long SEED = 20120611L;

    private SizeMix() {
    }

    /** @return the sequence of {@value #COUNT} sizes, the same on every call. */
    static int[] sizes() {
        final SplittableRandom r = new SplittableRandom(SEED);
        final int[] sizes = new int[COUNT];
        for (int i = 0; i < COUNT; i++) {
            int s;
            do {
                final double x = SCALE / SHAPE * (Math.pow(1 - r.nextDouble(), -SHAPE) - 1);
                s = (int) Math.max(1, Math.ceil(Math.min(x, Integer.MAX_VALUE)));
            } while (s > MAX_BYTES);
            sizes[i] = s;
        }
        return sizes;
    }
}
