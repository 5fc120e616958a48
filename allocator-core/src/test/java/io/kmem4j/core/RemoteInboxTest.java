package io.kmem4j.core;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.fail;

import java.util.ArrayList;
import java.util.BitSet;
import java.util.List;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;

import org.agrona.UnsafeApi;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

class RemoteInboxTest {
    private static final int OBJECT = 64;
    private static final int OBJECTS = 16;

    private long block;
    private final long[] obj = new long[OBJECTS];

    @BeforeEach
    void allocate() {
        block = UnsafeApi.allocateMemory((long) OBJECTS * OBJECT);
        for (int i = 0; i < OBJECTS; i++) {
            obj[i] = block + (long) i * OBJECT;
            UnsafeApi.putLong(obj[i], 0xDEAD_BEEFL); // garbage link: push must overwrite the last one
        }
    }

    @AfterEach
    void free() {
        UnsafeApi.freeMemory(block);
    }

    /** Links {@code objects[0] -> objects[1] -> ... -> objects[n-1]}; the last link is left as is. */
    private static void chain(final long... objects) {
        for (int i = objects.length - 2; i >= 0; i--) {
            assertThat(RemoteInbox.link(objects[i], objects[i + 1])).isEqualTo(objects[i]);
        }
    }

    private static List<Long> walk(final long head) {
        final List<Long> out = new ArrayList<>();
        for (long o = head; o != 0; o = RemoteInbox.next(o)) {
            out.add(o);
            if (out.size() > OBJECTS) {
                fail("chain longer than %d objects: %s", OBJECTS, out);
            }
        }
        return out;
    }

    @Test
    void linkWritesTheFirstEightBytes() {
        assertThat(RemoteInbox.link(obj[0], obj[5])).isEqualTo(obj[0]);
        assertThat(UnsafeApi.getLong(obj[0])).isEqualTo(obj[5]);
        assertThat(RemoteInbox.next(obj[0])).isEqualTo(obj[5]);
        assertThat(RemoteInbox.link(obj[1], 0)).isEqualTo(obj[1]);
        assertThat(RemoteInbox.next(obj[1])).isZero();
    }

    @Test
    void emptyInbox() {
        final RemoteInbox inbox = new RemoteInbox();
        assertThat(inbox.nonEmpty()).isFalse();
        assertThat(inbox.takeAll()).isZero();
        assertThat(inbox.close()).isZero();
    }

    @Test
    void takeAllReturnsBatchesLastPushedFirst() {
        final RemoteInbox inbox = new RemoteInbox();
        chain(obj[0], obj[1], obj[2]);
        assertThat(inbox.pushMt(obj[0], obj[2])).isTrue();
        assertThat(inbox.nonEmpty()).isTrue();
        assertThat(inbox.pushMt(obj[3], obj[3])).isTrue();
        chain(obj[4], obj[5]);
        assertThat(inbox.pushMt(obj[4], obj[5])).isTrue();

        final long head = inbox.takeAll();
        assertThat(walk(head)).containsExactly(obj[4], obj[5], obj[3], obj[0], obj[1], obj[2]);
        assertThat(inbox.nonEmpty()).isFalse();
        assertThat(inbox.takeAll()).isZero();

        // the inbox stays open: a new push starts a fresh chain ending in 0
        chain(obj[6], obj[7]);
        assertThat(inbox.pushMt(obj[6], obj[7])).isTrue();
        assertThat(walk(inbox.takeAll())).containsExactly(obj[6], obj[7]);
        assertThat(inbox.takeAll()).isZero();
    }

    @Test
    void closeReturnsThePendingChainAndRejectsLaterPushes() {
        final RemoteInbox inbox = new RemoteInbox();
        chain(obj[0], obj[1]);
        assertThat(inbox.pushMt(obj[0], obj[1])).isTrue();
        assertThat(inbox.pushMt(obj[2], obj[2])).isTrue();

        assertThat(walk(inbox.close())).containsExactly(obj[2], obj[0], obj[1]);
        assertThat(inbox.nonEmpty()).isFalse();

        UnsafeApi.putLong(obj[3], 0x1234L);
        assertThat(inbox.pushMt(obj[3], obj[3])).isFalse();
        // a rejected push leaves the object's link alone
        assertThat(UnsafeApi.getLong(obj[3])).isEqualTo(0x1234L);
        assertThat(inbox.nonEmpty()).isFalse();
        assertThat(inbox.takeAll()).isZero();
        assertThat(inbox.close()).isZero();
        assertThat(inbox.pushMt(obj[4], obj[4])).isFalse();
    }

    @Test
    void closeOfAnEmptyInboxStillClosesIt() {
        final RemoteInbox inbox = new RemoteInbox();
        assertThat(inbox.close()).isZero();
        assertThat(inbox.pushMt(obj[0], obj[0])).isFalse();
        assertThat(inbox.takeAll()).isZero();
    }

    @Test
    void concurrentSingleObjectPushesAreAllTakenExactlyOnce() throws Exception {
        final int producers = 4;
        final int perProducer = 100_000;
        final int total = producers * perProducer;
        final long region = UnsafeApi.allocateMemory((long) total * OBJECT);
        final RemoteInbox inbox = new RemoteInbox();
        final List<Thread> threads = new ArrayList<>();
        try {
            final CyclicBarrier start = new CyclicBarrier(producers + 1);
            final AtomicInteger finished = new AtomicInteger();
            final AtomicReference<Throwable> failure = new AtomicReference<>();
            for (int t = 0; t < producers; t++) {
                // producer t owns objects [t * perProducer, (t + 1) * perProducer) and pushes them in order
                final long pool = region + (long) t * perProducer * OBJECT;
                final Thread th = new Thread(() -> {
                    try {
                        start.await();
                        for (int i = 0; i < perProducer; i++) {
                            final long o = pool + (long) i * OBJECT;
                            if (!inbox.pushMt(o, o)) {
                                throw new AssertionError("push rejected by an open inbox");
                            }
                        }
                    } catch (final Throwable e) {
                        failure.compareAndSet(null, e);
                    } finally {
                        finished.incrementAndGet();
                    }
                }, "inbox-producer-" + t);
                th.setDaemon(true);
                threads.add(th);
                th.start();
            }
            start.await();

            final BitSet seen = new BitSet(total);
            // for each producer: the highest index taken in earlier chains (pushes come out newest first
            // within a chain and chains are taken in push order)
            final int[] maxTaken = new int[producers];
            java.util.Arrays.fill(maxTaken, -1);
            int seenCount = 0;
            int chains = 0;
            long emptyPolls = 0;
            final long maxEmptyPolls = 200_000_000L;
            while (seenCount < total) {
                final boolean allDone = finished.get() == producers; // read before the take
                final long head = inbox.takeAll();
                if (head == 0) {
                    if (allDone) {
                        fail("all producers finished but only %d of %d objects were taken (failure: %s)",
                            seenCount, total, failure.get());
                    }
                    if (++emptyPolls > maxEmptyPolls) {
                        fail("gave up after %d empty polls with %d of %d objects taken", emptyPolls, seenCount, total);
                    }
                    Thread.yield();
                    continue;
                }
                chains++;
                final int[] firstInChain = new int[producers]; // newest object of each producer
                final int[] lastInChain = new int[producers];
                java.util.Arrays.fill(firstInChain, -1);
                java.util.Arrays.fill(lastInChain, Integer.MAX_VALUE);
                int length = 0;
                for (long o = head; o != 0; o = RemoteInbox.next(o)) {
                    final long off = o - region;
                    if (off < 0 || off >= (long) total * OBJECT || off % OBJECT != 0) {
                        fail("foreign address %x in chain %d (region %x)", o, chains, region);
                    }
                    final int index = (int) (off / OBJECT);
                    if (seen.get(index)) {
                        fail("object %d taken twice (chain %d)", index, chains);
                    }
                    seen.set(index);
                    seenCount++;
                    if (++length > total) {
                        fail("chain %d longer than the number of objects: a cycle", chains);
                    }
                    final int p = index / perProducer;
                    final int i = index % perProducer;
                    if (i >= lastInChain[p]) {
                        fail("producer %d: object %d follows %d in one chain; expected newest first", p, i,
                            lastInChain[p]);
                    }
                    if (i <= maxTaken[p]) {
                        fail("producer %d: object %d in chain %d is older than object %d taken before", p, i,
                            chains, maxTaken[p]);
                    }
                    if (firstInChain[p] < 0) {
                        firstInChain[p] = i;
                    }
                    lastInChain[p] = i;
                }
                for (int p = 0; p < producers; p++) {
                    maxTaken[p] = Math.max(maxTaken[p], firstInChain[p]);
                }
            }
            for (final Thread th : threads) {
                th.join();
            }
            assertThat(failure.get()).isNull();
            assertThat(seen.cardinality()).isEqualTo(total);
            assertThat(maxTaken).containsOnly(perProducer - 1);
            assertThat(inbox.takeAll()).isZero();
            assertThat(inbox.nonEmpty()).isFalse();
        } finally {
            // on failure, stop the producers (a closed inbox rejects pushes without writing) before the
            // memory they write to is freed
            inbox.close();
            for (final Thread th : threads) {
                th.join();
            }
            UnsafeApi.freeMemory(region);
        }
    }
}
