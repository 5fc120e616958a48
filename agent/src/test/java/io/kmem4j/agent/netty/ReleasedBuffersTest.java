package io.kmem4j.agent.netty;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.ByteOrder;
import java.util.ArrayList;
import java.util.List;

import io.kmem4j.core.SlabAllocator;
import io.kmem4j.core.SlabAllocatorConfig;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.PooledByteBufAllocator;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/** Released Netty buffers kept, constructed, for their thread's next buffer of the same size class. */
class ReleasedBuffersTest {
    /** No background reaper pass during a test (one would give back an ended thread's buffers early). */
    private final SlabAllocator allocator = new SlabAllocator(NettyBuffers.configFor(
        SlabAllocatorConfig.builder().reapIntervalMillis(60_000).chunkSizeBytes(4 << 20).build())); // 256 KiB classes
    private final NettyBuffers hook = new NettyBuffers(allocator, null);
    private final PooledByteBufAllocator netty = new PooledByteBufAllocator(true);

    @AfterEach
    void close() {
        allocator.close();
    }

    @Test
    void aReleasedBufferIsServedAgainToItsThreadWithTheShapeOfANewOne() {
        final ByteBuf first = buffer(1000, Integer.MAX_VALUE);
        final Object object = unwrapped(first);
        final long address = first.memoryAddress();
        first.writeLong(42).writeInt(7).markWriterIndex().readByte();
        first.markReaderIndex();
        first.retain();
        assertThat(first.release()).isFalse();
        assertThat(first.release()).as("reference count 0").isTrue();
        assertThat(hook.reused()).isZero();
        assertThat(allocator.stats().liveBuffers()).as("its block kept with it").isEqualTo(1);
        assertThat(hook.keptBytes()).isEqualTo(1024);

        final ByteBuf again = buffer(900, Integer.MAX_VALUE); // the same size class (897..1024)
        assertThat(unwrapped(again)).as("the same object, reset").isSameAs(object);
        assertThat(hook.reused()).isEqualTo(1);
        assertThat(hook.keptBytes()).isZero();
        assertThat(again.refCnt()).isEqualTo(1);
        assertThat(again.capacity()).isEqualTo(900);
        assertThat(again.maxCapacity()).isEqualTo(Integer.MAX_VALUE);
        assertThat(again.readerIndex()).isZero();
        assertThat(again.writerIndex()).isZero();
        assertThat(again.order()).isEqualTo(ByteOrder.BIG_ENDIAN);
        assertThat(again.isDirect()).isTrue();
        assertThat(again.memoryAddress()).isEqualTo(address);
        assertThat(again.nioBuffer(0, 900).remaining()).isEqualTo(900);
        assertThat(again.nioBufferCount()).isEqualTo(1);
        again.writerIndex(10).resetReaderIndex().resetWriterIndex();
        assertThat(again.readerIndex()).as("marks of the last user discarded").isZero();
        assertThat(again.writerIndex()).isZero();
        assertThat(again.writableBytes()).isEqualTo(900);

        again.writerIndex(900).setInt(896, 0x0102_0304);
        again.capacity(2000); // grown: another block; the kept one goes back
        assertThat(again.getInt(896)).isEqualTo(0x0102_0304);
        assertThat(again.release()).isTrue();
        assertThat(hook.keptBytes()).as("a grown buffer is not kept").isZero();
        assertThat(allocator.stats().liveBuffers()).isZero();
        assertThat(hook.releases()).isEqualTo(hook.buffers() + hook.grown.sum());
        assertThat(hook.failures()).isZero();
    }

    @Test
    void keptBuffersAreBoundedPerClassAndTheRestGoBack() {
        final List<ByteBuf> small = new ArrayList<>();
        final List<ByteBuf> large = new ArrayList<>();
        for (int i = 0; i < ReleasedBuffers.MAX_PER_CLASS + 8; i++) {
            small.add(buffer(256, Integer.MAX_VALUE));
        }
        final int largeKept = ReleasedBuffers.CLASS_BYTES / 65536;
        for (int i = 0; i < largeKept + 4; i++) { // more than the class's bytes allow
            large.add(buffer(65536, Integer.MAX_VALUE));
        }
        small.forEach(ByteBuf::release);
        large.forEach(ByteBuf::release);
        assertThat(allocator.stats().liveBuffers()).isEqualTo(ReleasedBuffers.MAX_PER_CLASS + largeKept);
        assertThat(hook.keptBytes()).isEqualTo(ReleasedBuffers.MAX_PER_CLASS * 256L + largeKept * 65536L);
        assertThat(hook.giveBackKept()).isEqualTo(ReleasedBuffers.MAX_PER_CLASS + largeKept);
        assertThat(allocator.stats().liveBuffers()).isZero();
        assertThat(hook.keptBytes()).isZero();
    }

    @Test
    void anEndedThreadsKeptBuffersGoBackAtTheNextReaperPass() throws InterruptedException {
        final ByteBuf mine = buffer(4096, Integer.MAX_VALUE);
        final Thread t = new Thread(() -> {
            final List<ByteBuf> bufs = new ArrayList<>();
            for (int i = 0; i < 10; i++) {
                bufs.add(buffer(2048, Integer.MAX_VALUE));
            }
            bufs.forEach(ByteBuf::release);
            buffer(2048, Integer.MAX_VALUE).release(); // served again from this thread's stack, and kept again
            mine.release(); // released here: kept by this thread, not by the one that allocated it
        });
        t.start();
        t.join();
        assertThat(allocator.stats().liveBuffers()).isEqualTo(11);
        assertThat(hook.keptBytes()).isEqualTo(10 * 2048L + 4096);
        final ByteBuf fresh = buffer(4096, Integer.MAX_VALUE);
        assertThat(unwrapped(fresh)).as("another thread's kept buffer is not this thread's").isNotSameAs(unwrapped(mine));
        fresh.release();
        assertThat(hook.giveBackKept()).isEqualTo(1);
        assertThat(hook.reused()).isEqualTo(1);
        assertThat(hook.buffers()).isEqualTo(13);
        assertThat(hook.releases()).as("kept: 11 + 1 by the ended thread, 1 by this one").isEqualTo(13);
        allocator.trim(); // runs the reaper's task: the ended thread's buffers go back
        assertThat(allocator.stats().liveBuffers()).isZero();
        assertThat(hook.keptBytes()).isZero();
        assertThat(hook.reused()).as("the ended thread's counts outlive its stacks").isEqualTo(1);
        assertThat(hook.buffers()).isEqualTo(13);
        assertThat(hook.releases()).isEqualTo(13);
        assertThat(allocator.stats().hookFailures()).isZero();
    }

    @Test
    void aThreadKeepsTheBuffersOfTheLastAllocatorItReleasedAndServesThemToThatAllocatorOnly() {
        final PooledByteBufAllocator other = new PooledByteBufAllocator(true);
        final ByteBuf a = buffer(512, Integer.MAX_VALUE);
        final Object kept = unwrapped(a);
        a.release();
        final ByteBuf b = (ByteBuf) hook.apply(other, capacities(512, Integer.MAX_VALUE));
        assertThat(unwrapped(b)).as("kept for another allocator").isNotSameAs(kept);
        assertThat(b.alloc()).isSameAs(other);
        final Object keptB = unwrapped(b);
        b.release(); // another allocator's: the first's kept buffer goes back, this one is kept
        assertThat(allocator.stats().liveBuffers()).isEqualTo(1);
        assertThat(hook.keptBytes()).isEqualTo(512);
        final ByteBuf c = buffer(512, Integer.MAX_VALUE);
        assertThat(unwrapped(c)).isNotSameAs(kept).isNotSameAs(keptB);
        assertThat(c.alloc()).isSameAs(netty);
        final ByteBuf d = (ByteBuf) hook.apply(other, capacities(512, Integer.MAX_VALUE));
        assertThat(unwrapped(d)).isSameAs(keptB);
        assertThat(d.alloc()).isSameAs(other);
        d.release();
        c.release();
        assertThat(hook.giveBackKept()).isEqualTo(1);
        assertThat(allocator.stats().liveBuffers()).isZero();
        assertThat(allocator.stats().doubleFrees()).isZero();
    }

    @Test
    void aThreadThatNeverAllocatedKeepsNothing() throws InterruptedException {
        final ByteBuf b = buffer(1000, Integer.MAX_VALUE);
        final Thread t = new Thread(b::release);
        t.start();
        t.join();
        assertThat(hook.keptBytes()).isZero();
        assertThat(allocator.stats().liveBuffers()).as("back to kmem4j at once").isZero();
        assertThat(hook.releases()).isEqualTo(1);
    }

    @Test
    void aThreadKeepsAtMostItsShareAndAtMostMaxThreadsThreadsKeep() throws InterruptedException {
        // one buffer of every size class from 1 to 256 KiB, kept in turn: some 1.6 MiB of classes, more than a thread keeps
        for (int kib = 1; kib <= 256; kib++) {
            buffer(kib * 1024, Integer.MAX_VALUE).release();
        }
        assertThat(hook.keptBytes()).as("kept up to the thread's budget, less than one large class short")
            .isLessThanOrEqualTo(ReleasedBuffers.THREAD_BYTES).isGreaterThan(ReleasedBuffers.THREAD_BYTES - (256 << 10));
        hook.giveBackKept();

        // under an 8 MiB limit one thread keeps at most 1/16 of it, 512 KiB, whatever the classes
        final ReleasedBuffers tiny = new ReleasedBuffers(allocator, 8L << 20);
        assertThat(tiny.maxThreads).isEqualTo(1);
        assertThat(tiny.threadBytes).isEqualTo(512 << 10);
        final Object owner = new Object();
        tiny.pop(owner, 0); // this thread's first allocation: from now on it keeps
        final int large = allocator.sizeClassIndex(128 << 10);
        final int page = allocator.sizeClassIndex(4096);
        final List<java.nio.ByteBuffer> blocks = new ArrayList<>();
        for (int i = 0; i < 4; i++) {
            final java.nio.ByteBuffer b = allocator.allocateExplicit(128 << 10);
            blocks.add(b);
            assertThat(tiny.push((java.util.function.Supplier<Object>) () -> b, owner, large)).as("128 KiB block %d", i).isTrue();
        }
        final java.nio.ByteBuffer more = allocator.allocateExplicit(4096);
        assertThat(tiny.push((java.util.function.Supplier<Object>) () -> more, owner, page))
            .as("512 KiB kept: no more, of any class").isFalse();
        assertThat(tiny.keptBytes()).isEqualTo(512 << 10);
        allocator.free(more);
        assertThat(tiny.giveBackMine()).isEqualTo(4);

        final ReleasedBuffers small = new ReleasedBuffers(allocator, 64L * 1024 * 1024); // a 64 MiB limit: 4 MiB kept
        assertThat(small.maxThreads).isEqualTo(4 * 1024 * 1024 / ReleasedBuffers.THREAD_BYTES);
        final Object nettyAllocator = new Object();
        final int cls = allocator.sizeClassIndex(4096);
        final java.util.concurrent.atomic.AtomicInteger kept = new java.util.concurrent.atomic.AtomicInteger();
        final java.util.concurrent.atomic.AtomicInteger popped = new java.util.concurrent.atomic.AtomicInteger();
        final java.util.concurrent.CountDownLatch end = new java.util.concurrent.CountDownLatch(1);
        final List<Thread> threads = new ArrayList<>();
        for (int i = 0; i < small.maxThreads + 8; i++) {
            final java.util.concurrent.CountDownLatch done = new java.util.concurrent.CountDownLatch(1);
            final Thread t = new Thread(() -> {
                if (small.pop(nettyAllocator, cls) != null) { // its first allocation: nothing kept yet
                    popped.incrementAndGet();
                }
                final java.nio.ByteBuffer block = allocator.allocateExplicit(4096);
                if (small.push((java.util.function.Supplier<Object>) () -> block, nettyAllocator, cls)) {
                    kept.incrementAndGet();
                } else {
                    allocator.free(block);
                }
                done.countDown();
                try {
                    end.await();
                } catch (final InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
            });
            threads.add(t);
            t.start();
            done.await(); // one at a time: the bound is exact when first allocations do not race
        }
        assertThat(popped.get()).isZero();
        assertThat(kept.get()).isEqualTo(small.maxThreads);
        assertThat(small.keptBytes()).isEqualTo(small.maxThreads * 4096L);
        end.countDown();
        for (final Thread t : threads) {
            t.join();
        }
        assertThat(small.giveBackEnded()).isEqualTo(small.maxThreads);
        assertThat(small.giveBackEnded()).as("given back once").isZero();
        assertThat(allocator.stats().liveBuffers()).isZero();
    }

    @Test
    void aBoundedRequestAsGrpcsBufferNNIsReusedWithItsOwnMaxCapacity() {
        final ByteBuf bounded = buffer(1024, 1024); // as gRPC's NettyWritableBufferAllocator asks: buffer(n, n)
        final Object kept = unwrapped(bounded);
        assertThat(bounded.maxCapacity()).isEqualTo(1024);
        bounded.release();
        final ByteBuf again = buffer(900, 1000); // the same size class (897..1024)
        assertThat(unwrapped(again)).as("the same object, reset").isSameAs(kept);
        assertThat(hook.reused()).isEqualTo(1);
        assertThat(again.capacity()).isEqualTo(900);
        assertThat(again.maxCapacity()).isEqualTo(1000);
        again.writeZero(900);
        assertThatThrownBy(() -> again.ensureWritable(101)).as("growth bounded by the max capacity asked for, not the block's")
            .isInstanceOf(IndexOutOfBoundsException.class);
        again.release();
        final ByteBuf unbounded = buffer(1020, Integer.MAX_VALUE);
        assertThat(unwrapped(unbounded)).isSameAs(kept);
        assertThat(unbounded.maxCapacity()).isEqualTo(Integer.MAX_VALUE);
        assertThat(unbounded.capacity()).isEqualTo(1020);
        unbounded.release();
        assertThat(hook.releases()).isEqualTo(hook.buffers() + hook.grown.sum());
        hook.giveBackKept();
        assertThat(allocator.stats().liveBuffers()).isZero();
    }

    @Test
    void aBufferGrowsWithinItsBlockWithoutACopyAsAPooledBufferWithinItsRun() {
        final ByteBuf b = buffer(900, Integer.MAX_VALUE); // a block of the 1024-byte class
        final long address = b.memoryAddress();
        b.writeZero(896).writeInt(0x0102_0304);
        assertThat(b.maxFastWritableBytes()).as("the rest of the block").isEqualTo(1024 - 900);
        b.writeLong(42); // past the capacity asked for, within the block
        assertThat(b.capacity()).as("grown to the block").isEqualTo(1024);
        assertThat(b.memoryAddress()).as("in place").isEqualTo(address);
        assertThat(b.getInt(896)).isEqualTo(0x0102_0304);
        assertThat(b.getLong(900)).isEqualTo(42);
        assertThat(hook.grown.sum()).isZero();
        b.writeZero(1024 - 908);
        b.writeByte(7); // beyond the block: Netty's own growth, a new kmem4j block and a copy
        assertThat(b.capacity()).isGreaterThan(1024);
        assertThat(b.memoryAddress()).isNotEqualTo(address);
        assertThat(b.getInt(896)).isEqualTo(0x0102_0304);
        assertThat(hook.grown.sum()).isEqualTo(1);
        assertThat(b.maxFastWritableBytes()).isEqualTo(b.writableBytes());
        final ByteBuf shrunk = buffer(1000, Integer.MAX_VALUE);
        final long shrunkAddress = shrunk.memoryAddress();
        shrunk.writeZero(996).writeInt(0x0A0B_0C0D).readerIndex(990);
        shrunk.capacity(100); // in place, indices trimmed as Netty's own capacity(n) trims them
        assertThat(shrunk.memoryAddress()).isEqualTo(shrunkAddress);
        assertThat(shrunk.capacity()).isEqualTo(100);
        assertThat(shrunk.writerIndex()).isEqualTo(100);
        assertThat(shrunk.readerIndex()).isEqualTo(100);
        shrunk.capacity(1024).setIndex(0, 1000); // and grown back within the block: the bytes are still there
        assertThat(shrunk.getInt(996)).isEqualTo(0x0A0B_0C0D);
        final Object shrunkObject = unwrapped(shrunk);
        shrunk.release();
        final ByteBuf shrunkAgain = buffer(1000, Integer.MAX_VALUE);
        assertThat(unwrapped(shrunkAgain)).as("kept: it still has its block").isSameAs(shrunkObject);
        shrunkAgain.release();
        assertThat(hook.grown.sum()).isEqualTo(1);
        final ByteBuf bounded = buffer(100, 110);
        assertThat(bounded.maxFastWritableBytes()).as("bounded by its max capacity, not the block's 128").isEqualTo(110);
        bounded.writeZero(110);
        assertThat(bounded.capacity()).isEqualTo(110);
        bounded.release();
        b.release();
        assertThat(hook.releases()).isEqualTo(hook.buffers() + hook.grown.sum());
        hook.giveBackKept();
        assertThat(allocator.stats().liveBuffers()).isZero();
    }

    @Test
    void aBufferServedAgainWithItsLastCapacityKeepsNettysCachedDuplicateAndANewShape() {
        final ByteBuf first = buffer(1000, 1000);
        final Object object = unwrapped(first);
        first.writeZero(1000).readerIndex(10).markReaderIndex();
        final java.nio.ByteBuffer nio = first.internalNioBuffer(10, 990); // Netty's cached duplicate of the block
        nio.position(500);
        first.release();
        final ByteBuf again = buffer(1000, Integer.MAX_VALUE); // the same capacity: no setByteBuffer
        assertThat(unwrapped(again)).isSameAs(object);
        assertThat(again.internalNioBuffer(0, 1000)).as("no new duplicate").isSameAs(nio);
        assertThat(nio.position()).isZero();
        assertThat(nio.limit()).isEqualTo(1000);
        assertThat(again.capacity()).isEqualTo(1000);
        assertThat(again.maxCapacity()).isEqualTo(Integer.MAX_VALUE);
        assertThat(again.readerIndex()).isZero();
        assertThat(again.writerIndex()).isZero();
        assertThat(again.nioBuffer(0, 1000).remaining()).isEqualTo(1000);
        again.resetReaderIndex();
        assertThat(again.readerIndex()).as("marks discarded").isZero();
        again.writeZero(1000).writeByte(1); // grown within the block to 1024
        again.release();
        final ByteBuf third = buffer(1000, Integer.MAX_VALUE);
        assertThat(unwrapped(third)).isSameAs(object);
        assertThat(third.capacity()).as("back to the capacity asked").isEqualTo(1000);
        assertThat(third.writableBytes()).isEqualTo(1000);
        third.release();
        assertThat(hook.releases()).isEqualTo(hook.buffers() + hook.grown.sum());
        hook.giveBackKept();
        assertThat(allocator.stats().liveBuffers()).isZero();
    }

    @Test
    void retainedViewsHaveACountOfTheirOwnAsNettysPooledBuffersSoAViewReleasedTwiceCannotFreeItsOwner() {
        for (final ByteBuf owner : new ByteBuf[] {buffer(256, Integer.MAX_VALUE), netty.directBuffer(256)}) {
            final String which = owner.alloc() == netty && unwrapped(owner) instanceof java.util.function.Supplier
                ? "kmem4j's" : "Netty pooled's";
            owner.writeBytes("owner-data".getBytes(java.nio.charset.StandardCharsets.US_ASCII));
            final ByteBuf slice = owner.retainedSlice(0, 5);
            final ByteBuf dup = owner.retainedDuplicate();
            final ByteBuf read = owner.readRetainedSlice(2);
            final ByteBuf whole = owner.retainedSlice();
            assertThat(slice.refCnt()).as("%s view", which).isEqualTo(1);
            assertThat(owner.refCnt()).as("%s owner, retained once per view", which).isEqualTo(5);
            assertThat(slice.release()).as("%s view at 0", which).isTrue();
            assertThatThrownBy(slice::release).as("%s view released twice", which)
                .isInstanceOf(io.netty.util.IllegalReferenceCountException.class);
            assertThat(dup.release()).isTrue();
            assertThat(read.release()).isTrue();
            assertThat(whole.release()).isTrue();
            assertThat(owner.refCnt()).as("%s owner untouched by the second release", which).isEqualTo(1);
            assertThat(owner.getByte(0)).isEqualTo((byte) 'o');
            assertThat(owner.release()).isTrue();
        }
        assertThat(hook.releases()).isEqualTo(hook.buffers());
        hook.giveBackKept();
        assertThat(allocator.stats().liveBuffers()).isZero();
    }

    @Test
    void afterStoppingReleasedBuffersGoBackAtOnce() {
        final ByteBuf b = buffer(300, Integer.MAX_VALUE);
        hook.stopAllocating();
        b.release();
        assertThat(hook.keptBytes()).isZero();
        assertThat(allocator.stats().liveBuffers()).isZero();
    }

    private ByteBuf buffer(final int initial, final int max) {
        final ByteBuf b = (ByteBuf) hook.apply(netty, capacities(initial, max));
        assertThat(b).as("served").isNotNull();
        return b;
    }

    /** Under Netty's leak-detection wrapper, when this buffer was sampled. */
    private static Object unwrapped(final ByteBuf buf) {
        ByteBuf b = buf;
        while (b.getClass().getSimpleName().contains("LeakAware")) {
            b = b.unwrap();
        }
        return b;
    }

    private static Long capacities(final int initial, final int max) {
        return (long) max << 32 | (initial & 0xFFFF_FFFFL);
    }
}
