package io.kmem4j.testing;

import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import java.util.concurrent.locks.LockSupport;

import io.kmem4j.core.SlabAllocator;

/** Owners that allocate, tag, hand some buffers to others, free, and pause (outside kmem4j's core, so the reaper may revoke them). */
public final class PausingOwner {
    private static final int[] SIZES = {64, 256, 4096, 16384};
    private static final AtomicLong TAGS = new AtomicLong(1);

    private PausingOwner() {
    }

    public static Runnable owner(final SlabAllocator a, final long seed, final AtomicBoolean stop,
                                 final ConcurrentLinkedQueue<ByteBuffer> exchange,
                                 final AtomicReference<Throwable> failure, final AtomicLong ops) {
        return () -> {
            final SplittableRandom r = new SplittableRandom(seed);
            try {
                while (!stop.get()) {
                    final int n = 1 + r.nextInt(64);
                    final List<ByteBuffer> mine = new ArrayList<>(n);
                    final List<Long> tags = new ArrayList<>(n);
                    for (int i = 0; i < n; i++) {
                        final int size = SIZES[r.nextInt(SIZES.length)];
                        final ByteBuffer b = r.nextBoolean() ? a.allocateExplicit(size) : a.allocate(size);
                        if (b.getLong(0) != 0 || b.getLong(size - 8) != 0) {
                            throw new AssertionError("not zero: " + b.getLong(0) + " " + b.getLong(size - 8) + " size " + size);
                        }
                        final long tag = TAGS.getAndIncrement();
                        b.putLong(0, tag).putLong(size - 8, tag);
                        mine.add(b);
                        tags.add(tag);
                    }
                    for (int i = 0; i < n; i++) {
                        final ByteBuffer b = mine.get(i);
                        final long tag = tags.get(i);
                        if (b.getLong(0) != tag || b.getLong(b.capacity() - 8) != tag) {
                            throw new AssertionError("buffer handed to two owners: tag " + tag + " reads " + b.getLong(0));
                        }
                        b.putLong(0, 0).putLong(b.capacity() - 8, 0);
                        if (r.nextInt(4) == 0) {
                            exchange.add(b);
                        } else {
                            a.free(b);
                        }
                    }
                    ByteBuffer o;
                    int k = 0;
                    while (k++ < 64 && (o = exchange.poll()) != null) {
                        a.free(o);
                    }
                    ops.incrementAndGet();
                    final int pause = r.nextInt(8);
                    if (pause == 0) {
                        LockSupport.parkNanos(1_000_000L + r.nextInt(2_000_000)); // idle: the reaper may revoke
                    } else if (pause == 1) {
                        Thread.yield();
                    }
                }
                ByteBuffer o;
                while ((o = exchange.poll()) != null) {
                    a.free(o);
                }
            } catch (final Throwable e) {
                failure.compareAndSet(null, e);
                stop.set(true);
            }
        };
    }
}
