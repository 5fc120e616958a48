package io.kmem4j.samples.pipeline;

import io.kmem4j.samples.support.DirectBuffers;
import io.kmem4j.samples.support.Payload;
import io.kmem4j.samples.support.Workers;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;
import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.LongAdder;

/**
 * Producers allocate and fill direct buffers, consumers verify and release them; bounded queues
 * connect the two, so every buffer is released on a different thread than the one that allocated
 * it.
 *
 * <p>Producer {@code p} makes its share of the items; item {@code i} is a direct buffer of a random
 * size (from a {@link SplittableRandom} split once per producer off the seed) holding the {@link
 * Payload} sequence of {@code Payload.seed(p, i)}, and goes to consumer {@code (p + i) % C}. A
 * consumer checks the buffer's capacity and every byte, then frees it with {@link
 * DirectBuffers#free}, except every {@code dropEvery}-th item of a producer, which it just drops
 * for the garbage collector. The last producer to finish puts one end marker into every queue.
 *
 * <p>Threads: {@code pipeline-producer-N} and {@code pipeline-consumer-N}, started by {@link #run},
 * which blocks the calling thread until all are done. A pipeline runs once.
 */
final class Pipeline {

    /** Totals of a run or of one consumer. */
    record Result(long items, long bytes, long corrupt, long freed, long dropped) {
        static final Result EMPTY = new Result(0, 0, 0, 0, 0);

        Result plus(Result o) {
            return new Result(items + o.items, bytes + o.bytes, corrupt + o.corrupt,
                    freed + o.freed, dropped + o.dropped);
        }
    }

    /** One buffer in flight; {@code length} is what the producer asked for. */
    private record Item(int producer, int index, int length, ByteBuffer buffer) {}

    private static final Item END = new Item(-1, -1, 0, null);

    private final int producers;
    private final int consumers;
    private final int items;
    private final int minSize;
    private final int maxSize;
    private final long seed;
    private final int dropEvery;
    private final List<BlockingQueue<Item>> queues;
    private final AtomicInteger producersRunning;
    private final LongAdder consumed = new LongAdder();

    /**
     * @param items total number of items, split as evenly as possible across producers
     * @param minSize smallest buffer, bytes, inclusive
     * @param maxSize largest buffer, bytes, inclusive
     * @param queueCapacity capacity of each consumer's queue
     * @param dropEvery every this many items of a producer are dropped instead of freed (0: never)
     */
    Pipeline(int producers, int consumers, int items, int minSize, int maxSize, int queueCapacity,
            long seed, int dropEvery) {
        this.producers = producers;
        this.consumers = consumers;
        this.items = items;
        this.minSize = minSize;
        this.maxSize = maxSize;
        this.seed = seed;
        this.dropEvery = dropEvery;
        this.queues = new ArrayList<>(consumers);
        for (int c = 0; c < consumers; c++) {
            queues.add(new ArrayBlockingQueue<>(queueCapacity));
        }
        this.producersRunning = new AtomicInteger(producers);
    }

    /** Items verified so far; may be called from any thread. */
    long consumed() {
        return consumed.sum();
    }

    /**
     * Runs all producers and consumers to completion.
     *
     * @param progress called every two seconds on the calling thread
     */
    Result run(Runnable progress) throws Exception {
        SplittableRandom seeds = new SplittableRandom(seed);
        List<Workers.Task<Result>> tasks = new ArrayList<>();
        for (int p = 0; p < producers; p++) {
            int producer = p;
            int count = items / producers + (p < items % producers ? 1 : 0);
            SplittableRandom random = seeds.split();
            tasks.add(new Workers.Task<>("pipeline-producer-" + p,
                    () -> produce(producer, count, random)));
        }
        for (int c = 0; c < consumers; c++) {
            BlockingQueue<Item> queue = queues.get(c);
            tasks.add(new Workers.Task<>("pipeline-consumer-" + c, () -> consume(queue)));
        }
        Result total = Result.EMPTY;
        for (Result result : Workers.run(tasks, progress)) {
            total = total.plus(result);
        }
        return total;
    }

    private Result produce(int producer, int count, SplittableRandom random)
            throws InterruptedException {
        for (int i = 0; i < count; i++) {
            int length = random.nextInt(minSize, maxSize + 1);
            ByteBuffer buffer = ByteBuffer.allocateDirect(length);
            Payload.fill(buffer, 0, length, Payload.seed(producer, i));
            queues.get((producer + i) % consumers).put(new Item(producer, i, length, buffer));
        }
        if (producersRunning.decrementAndGet() == 0) {
            for (BlockingQueue<Item> queue : queues) {
                queue.put(END);
            }
        }
        return Result.EMPTY;
    }

    private Result consume(BlockingQueue<Item> queue) throws InterruptedException {
        long count = 0;
        long bytes = 0;
        long corrupt = 0;
        long freed = 0;
        long dropped = 0;
        for (Item item = queue.take(); item != END; item = queue.take()) {
            ByteBuffer buffer = item.buffer();
            boolean intact = buffer.capacity() == item.length()
                    && Payload.countMismatches(buffer, 0, item.length(),
                            Payload.seed(item.producer(), item.index())) == 0;
            if (!intact) {
                corrupt++;
            }
            count++;
            bytes += item.length();
            boolean drop = dropEvery > 0 && item.index() % dropEvery == dropEvery - 1;
            if (!drop && DirectBuffers.free(buffer)) {
                freed++;
            } else {
                dropped++; // left to the garbage collector
            }
            consumed.increment();
        }
        return new Result(count, bytes, corrupt, freed, dropped);
    }
}
