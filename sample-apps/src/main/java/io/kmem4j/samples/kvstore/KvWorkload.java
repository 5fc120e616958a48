package io.kmem4j.samples.kvstore;

import io.kmem4j.samples.support.Workers;
import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;
import java.util.concurrent.atomic.LongAdder;

/**
 * The kvstore workload: load every key once, then let {@code threads} threads run a mix of gets,
 * puts and deletes on random keys, verifying every value they read; finally verify and release
 * whatever is left.
 *
 * <p>Thread {@code t} draws its keys and operations from a {@link SplittableRandom} split off the
 * seed, so the sequence of operations (and their counts) is reproducible; which gets hit depends on
 * the interleaving of the threads.
 *
 * <p>Threads: {@code kvstore-N}, started by {@link #run}, which blocks the calling thread.
 */
final class KvWorkload {

    /** Totals of a run or of one thread. */
    record Result(long ops, long gets, long puts, long deletes, long hits, long mismatches) {
        static final Result EMPTY = new Result(0, 0, 0, 0, 0, 0);

        Result plus(Result o) {
            return new Result(ops + o.ops, gets + o.gets, puts + o.puts, deletes + o.deletes,
                    hits + o.hits, mismatches + o.mismatches);
        }
    }

    private final KvStore store;
    private final int keys;
    private final int threads;
    private final int ops;
    private final int getPercent;
    private final int putPercent;
    private final long seed;
    private final LongAdder done = new LongAdder();

    /**
     * @param ops total operations, split as evenly as possible across the threads
     * @param getPercent share of gets; puts take the next {@code putPercent}, deletes the rest
     */
    KvWorkload(KvStore store, int keys, int threads, int ops, int getPercent, int putPercent,
            long seed) {
        this.store = store;
        this.keys = keys;
        this.threads = threads;
        this.ops = ops;
        this.getPercent = getPercent;
        this.putPercent = putPercent;
        this.seed = seed;
    }

    /** Operations done so far; may be called from any thread. */
    long done() {
        return done.sum();
    }

    /** Loads every key once (version 1), on the calling thread. */
    void load() {
        for (int key = 0; key < keys; key++) {
            store.put(key);
        }
    }

    /**
     * Runs all threads to completion.
     *
     * @param progress called every two seconds on the calling thread
     */
    Result run(Runnable progress) throws Exception {
        SplittableRandom seeds = new SplittableRandom(seed);
        List<Workers.Task<Result>> tasks = new ArrayList<>();
        for (int t = 0; t < threads; t++) {
            int count = ops / threads + (t < ops % threads ? 1 : 0);
            SplittableRandom random = seeds.split();
            tasks.add(new Workers.Task<>("kvstore-" + t, () -> work(count, random)));
        }
        Result total = Result.EMPTY;
        for (Result result : Workers.run(tasks, progress)) {
            total = total.plus(result);
        }
        return total;
    }

    private Result work(int count, SplittableRandom random) {
        long gets = 0;
        long puts = 0;
        long deletes = 0;
        long hits = 0;
        long mismatches = 0;
        for (int i = 0; i < count; i++) {
            int key = random.nextInt(keys);
            int dice = random.nextInt(100);
            if (dice < getPercent) {
                gets++;
                long wrong = store.get(key);
                if (wrong >= 0) {
                    hits++;
                    mismatches += wrong;
                }
            } else if (dice < getPercent + putPercent) {
                puts++;
                store.put(key);
            } else {
                deletes++;
                store.delete(key);
            }
            if ((i & 1023) == 1023) {
                done.add(1024);
            }
        }
        done.add(count & 1023);
        return new Result(count, gets, puts, deletes, hits, mismatches);
    }
}
