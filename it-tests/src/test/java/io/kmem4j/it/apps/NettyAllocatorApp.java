package io.kmem4j.it.apps;

import io.netty.buffer.AdaptiveByteBufAllocator;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.netty.buffer.CompositeByteBuf;
import io.netty.buffer.PooledByteBufAllocator;
import io.netty.util.Version;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.zip.CRC32;

/**
 * What a Netty program sees of its pooled and adaptive allocators' direct buffers (the
 * {@code presets=netty-allocator} contract): the same lines with and without the agent, except the
 * {@code served} lines, which name the buffer classes. Runs against the API Netty 4.1.111+ and 4.2
 * share. Prints, on stdout, for each of {@code pooled} and {@code adaptive}:
 * <pre>
 * nettyalloc: pooled served 256=&lt;class&gt; 200000=&lt;class&gt; 300000=&lt;class&gt;
 * nettyalloc: pooled shape cap=256 max=2147483647 r=0 w=0 direct=true order=BIG_ENDIAN nio=1
 * nettyalloc: pooled grow ok caps=256,65536,131072,524288 w=90000 crc=...
 * nettyalloc: pooled views ok refCnt=0
 * nettyalloc: pooled composite ok refCnt=0,0,0
 * nettyalloc: pooled remote ok buffers=2000 crc=...
 * nettyalloc: pooled dropped 500
 * </pre>
 * then {@code nettyalloc: ok}, and with {@code --hold}, {@code nettyalloc: holding} until the end of
 * stdin. Any failure prints {@code nettyalloc: FAIL ...} and exits 1. The dropped buffers are never
 * released (a leak, for the leak detector's count).
 */
public final class NettyAllocatorApp {
    static final int REMOTE_BUFFERS = 2000;
    static final int DROPPED = 500;

    private NettyAllocatorApp() {
    }

    public static void main(String[] args) throws Exception {
        try {
            System.out.println("nettyalloc: version=" + Version.identify().get("netty-buffer").artifactVersion());
            check("pooled", new PooledByteBufAllocator(true));
            check("adaptive", new AdaptiveByteBufAllocator(true, true));
            System.out.println("nettyalloc: ok");
        } catch (Throwable t) {
            System.out.println("nettyalloc: FAIL " + t);
            t.printStackTrace(System.out);
            System.exit(1);
        }
        if (List.of(args).contains("--hold")) {
            System.out.println("nettyalloc: holding");
            while (System.in.read() >= 0) {
                // until EOF
            }
        }
    }

    private static void check(String name, ByteBufAllocator alloc) throws Exception {
        ByteBuf small = alloc.directBuffer(256);
        ByteBuf big = alloc.directBuffer(200_000); // in the largest size classes (nettyMaxSizeClassBytes, 256 KiB)
        ByteBuf large = alloc.directBuffer(300_000); // above them
        System.out.println("nettyalloc: " + name + " served 256=" + unwrapped(small) + " 200000=" + unwrapped(big)
                + " 300000=" + unwrapped(large));
        System.out.println("nettyalloc: " + name + " shape cap=" + small.capacity() + " max=" + small.maxCapacity()
                + " r=" + small.readerIndex() + " w=" + small.writerIndex() + " direct=" + small.isDirect()
                + " order=" + small.order() + " nio=" + small.nioBufferCount() + " ioBuffer="
                + alloc.ioBuffer(100).release());
        large.release();
        big.release();
        small.release();
        if (small.refCnt() != 0) {
            throw new AssertionError("refCnt after release " + small.refCnt());
        }
        grow(name, alloc);
        views(name, alloc);
        composite(name, alloc);
        remote(name, alloc);
        for (int i = 0; i < DROPPED; i++) {
            ByteBuf b = alloc.directBuffer(1000 + i);
            b.writeInt(i);
        }
        System.out.println("nettyalloc: " + name + " dropped " + DROPPED);
    }

    /** 256 B -> 64 KiB -> 128 KiB (in kmem4j's classes) -> 512 KiB (above them: Netty's own), contents kept. */
    private static void grow(String name, ByteBufAllocator alloc) {
        ByteBuf b = alloc.directBuffer(256);
        StringBuilder caps = new StringBuilder().append(b.capacity());
        for (int i = 0; i < 10_000; i++) {
            b.writeInt(i * 31);
        }
        caps.append(',').append(b.capacity());
        b.ensureWritable(100_000);
        caps.append(',').append(b.capacity());
        b.ensureWritable(300_000);
        caps.append(',').append(b.capacity());
        for (int i = 0; i < 10_000; i++) {
            if (b.getInt(i * 4) != i * 31) {
                throw new AssertionError(name + ": contents lost on growth at int " + i);
            }
        }
        b.writeBytes(new byte[50_000]);
        System.out.println("nettyalloc: " + name + " grow ok caps=" + caps + " w=" + b.writerIndex() + " crc=" + crc(b));
        b.release();
    }

    /** Slices, duplicates and retained views share the root's count: the memory goes once, at the last release. */
    private static void views(String name, ByteBufAllocator alloc) {
        ByteBuf b = alloc.directBuffer(4096);
        b.writeLong(0x0102030405060708L).writeLong(42);
        ByteBuf slice = b.slice(0, 8);
        ByteBuf dup = b.duplicate();
        ByteBuf retained = b.retainedSlice(8, 8);
        ByteBuf retainedDup = b.retainedDuplicate();
        ByteBuf read = b.readRetainedSlice(8);
        long sum = slice.getLong(0) + dup.getLong(8) + retained.getLong(0) + retainedDup.getLong(0) + read.getLong(0);
        java.nio.ByteBuffer nio = b.nioBuffer(0, 16);
        sum += nio.getLong(8);
        b.release();
        if (retained.refCnt() == 0) {
            throw new AssertionError(name + ": memory gone with retained views left");
        }
        sum += retained.getLong(0);
        retained.release();
        retainedDup.release();
        read.release();
        System.out.println("nettyalloc: " + name + " views ok sum=" + sum + " refCnt=" + b.refCnt());
    }

    private static void composite(String name, ByteBufAllocator alloc) {
        CompositeByteBuf c = alloc.compositeDirectBuffer();
        ByteBuf[] parts = {alloc.directBuffer(100), alloc.directBuffer(2000), alloc.directBuffer(30_000)};
        for (ByteBuf p : parts) {
            p.writeBytes(new byte[p.capacity()]).setByte(0, 7);
            c.addComponent(true, p);
        }
        ByteBuf flat = alloc.directBuffer(c.readableBytes());
        flat.writeBytes(c, c.readerIndex(), c.readableBytes());
        long crc = crc(flat);
        flat.release();
        c.release();
        System.out.println("nettyalloc: " + name + " composite ok crc=" + crc + " refCnt=" + parts[0].refCnt() + ","
                + parts[1].refCnt() + "," + parts[2].refCnt());
    }

    /** Allocated on this thread, released on another (as a write completes on another event loop). */
    private static void remote(String name, ByteBufAllocator alloc) throws Exception {
        List<ByteBuf> buffers = new ArrayList<>();
        CRC32 crc = new CRC32();
        for (int i = 0; i < REMOTE_BUFFERS; i++) {
            ByteBuf b = alloc.directBuffer(64 + (i % 50) * 100);
            b.writeInt(i).writeZero(b.writableBytes());
            buffers.add(b);
        }
        ExecutorService other = Executors.newSingleThreadExecutor();
        try {
            other.submit(() -> {
                for (ByteBuf b : buffers) {
                    crc.update(b.nioBuffer());
                    b.release();
                }
            }).get(60, TimeUnit.SECONDS);
        } finally {
            other.shutdown();
        }
        System.out.println("nettyalloc: " + name + " remote ok buffers=" + buffers.size() + " crc=" + crc.getValue());
    }

    /** The buffer's class, under Netty's leak-detection wrapper (which sampling adds to some buffers). */
    private static String unwrapped(ByteBuf b) {
        ByteBuf x = b;
        while (x.getClass().getSimpleName().contains("LeakAware") && x.unwrap() != null) {
            x = x.unwrap();
        }
        return x.getClass().getSimpleName();
    }

    private static long crc(ByteBuf b) {
        CRC32 crc = new CRC32();
        crc.update(b.nioBuffer(b.readerIndex(), b.readableBytes()));
        return crc.getValue();
    }

}
