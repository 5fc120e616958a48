package io.kmem4j.it.apps;

import io.netty.util.internal.PlatformDependent;
import java.lang.reflect.Method;
import java.nio.ByteBuffer;
import java.util.Map;

/**
 * Every release path the ecosystem uses, once each, on a buffer of 4 KiB from
 * {@code ByteBuffer.allocateDirect} (served by the slabs under an agent), then a second time on the
 * same buffer, with the allocator bean's counters read before, after the first and after the second
 * release (in-process, by JMX name only; nothing else in this program allocates direct memory):
 * <ol>
 *   <li>{@code sun.misc.Unsafe.invokeCleaner} (libraries, JDK 9+);</li>
 *   <li>{@code jdk.internal.misc.Unsafe.invokeCleaner} (Agrona 2.x; needs
 *       {@code --add-exports java.base/jdk.internal.misc=ALL-UNNAMED});</li>
 *   <li>{@code ((DirectBuffer) b).cleaner().clean()} (older libraries; {@link Cleaners#cleanerCleanExports});</li>
 *   <li>GC (the buffer dropped, {@code System.gc()} until it was cleaned, at most 30 s);</li>
 *   <li>views keep the memory: the root filled with {@code 0xAB} and dropped while a {@code duplicate},
 *       a {@code slice}, an {@code asReadOnlyBuffer} and an {@code asLongBuffer} live; after GC and new
 *       buffers filled with {@code 0xFF} every view still reads {@code 0xAB} and nothing was freed; the
 *       views dropped, GC frees the block once;</li>
 *   <li>Netty's {@code PlatformDependent.freeDirectBuffer} (Netty on the class path; Netty 4.2 on
 *       JDK 24+ needs {@code -Dio.netty.noUnsafe=false} for it, else it refuses a JDK buffer);</li>
 *   <li>Agrona's {@code BufferUtil.free} (Agrona on the class path);</li>
 *   <li>the JDK's own: {@code sun.nio.ch.Util}'s temporary direct buffer of a thread that writes a heap
 *       buffer to a file, freed by the JDK when the thread ends (JDK 17-23 take it from
 *       {@code allocateDirect}, so kmem4j serves it; 24+ allocate it otherwise, JDK-8344882:
 *       {@code served=0}).</li>
 * </ol>
 * stdout, per path: {@code release-paths: <path> served=<a> frees=<d1> explicit=<e1> gc=<g1> again=<d2> againExplicit=<e2>}, the
 * deltas of {@code Allocations}, {@code Frees}, {@code ExplicitFrees} and {@code GcFrees} after the first release and of
 * {@code Frees} and {@code ExplicitFrees} after the second ({@code ?} without an allocator bean); then
 * {@code release-paths: done doubleFrees=<n> interceptorFailures=<n>}. A path that throws prints
 * {@code release-paths: FAIL <path> <exception>} and the program exits 1.
 */
public final class ReleasePathsApp {

    private static final int SIZE = 4096;
    private static final String[] COUNTERS = {"Allocations", "Frees", "ExplicitFrees", "GcFrees", "DoubleFrees",
        "InterceptorFailures"};

    private ReleasePathsApp() {
    }

    public static void main(String[] args) throws Exception {
        BeanReads.awaitAllocator(10_000);
        boolean failed = false;
        failed |= path("sun.misc.Unsafe.invokeCleaner", Cleaners::invokeCleaner);
        Object internal = Class.forName("jdk.internal.misc.Unsafe").getMethod("getUnsafe").invoke(null);
        Method internalInvokeCleaner = internal.getClass().getMethod("invokeCleaner", ByteBuffer.class);
        failed |= path("jdk.internal.misc.Unsafe.invokeCleaner", b -> internalInvokeCleaner.invoke(internal, b));
        failed |= path("cleaner().clean()", b -> {
            String outcome = Cleaners.cleanerClean(b);
            if (!outcome.equals("cleaned")) {
                throw new IllegalStateException(outcome);
            }
        });
        failed |= gc(); // before Netty, whose start-up drops direct buffers of its own
        failed |= views();
        PlatformDependent.hasUnsafe(); // Netty's start-up allocations before the path's first reading
        settleGcReleases(); // and the buffers Netty's start-up dropped released now, not by a GC in a later window
        failed |= path("PlatformDependent.freeDirectBuffer", PlatformDependent::freeDirectBuffer);
        failed |= path("BufferUtil.free", org.agrona.BufferUtil::free);
        failed |= temporaryBuffer();
        Map<String, Long> end = BeanReads.freshAllocator(COUNTERS);
        System.out.println("release-paths: done doubleFrees=" + end.getOrDefault("DoubleFrees", -1L)
                + " interceptorFailures=" + end.getOrDefault("InterceptorFailures", -1L));
        if (failed) {
            System.exit(1);
        }
    }

    /**
     * Collects until the allocator's counters stop changing: buffers dropped before (Netty 4.1's start-up drops
     * a 1-byte probe buffer) are released by GC here, not by whichever collection falls into a later path's
     * window, which then counted one GC release too many (which collection finds them depends on heap layout
     * and timing alone).
     */
    private static void settleGcReleases() throws Exception {
        Map<String, Long> last = BeanReads.freshAllocator(COUNTERS);
        for (int round = 0; round < 20; round++) {
            System.gc();
            Thread.sleep(50);
            Map<String, Long> now = BeanReads.freshAllocator(COUNTERS);
            if (now.equals(last)) {
                return;
            }
            last = now;
        }
    }

    /** A release; the second call on a released buffer must do nothing. */
    private interface Release {
        void release(ByteBuffer b) throws Exception;
    }

    private static boolean path(String name, Release release) throws Exception {
        Map<String, Long> before = BeanReads.freshAllocator(COUNTERS);
        ByteBuffer b = ByteBuffer.allocateDirect(SIZE);
        b.putLong(0, 0x6b6d656d346aL);
        try {
            release.release(b);
            Map<String, Long> first = BeanReads.freshAllocator(COUNTERS);
            release.release(b);
            Map<String, Long> second = BeanReads.freshAllocator(COUNTERS);
            report(name, before, first, second);
            return false;
        } catch (Exception e) {
            Throwable t = e instanceof java.lang.reflect.InvocationTargetException ? e.getCause() : e;
            System.out.println("release-paths: FAIL " + name + " " + t);
            return true;
        }
    }

    /**
     * The one line per path the test reads: what the first release did ({@code before} to {@code first})
     * and what a second one did ({@code first} to {@code second}; the same map when there is none).
     */
    private static void report(String name, Map<String, Long> before, Map<String, Long> first, Map<String, Long> second) {
        System.out.println("release-paths: " + name + " served=" + delta(before, first, "Allocations")
                + " frees=" + delta(before, first, "Frees") + " explicit=" + delta(before, first, "ExplicitFrees")
                + " gc=" + delta(before, first, "GcFrees") + " again=" + delta(first, second, "Frees")
                + " againExplicit=" + delta(first, second, "ExplicitFrees"));
    }

    private static boolean gc() throws Exception {
        Map<String, Long> before = BeanReads.freshAllocator(COUNTERS);
        java.lang.ref.ReferenceQueue<ByteBuffer> queue = new java.lang.ref.ReferenceQueue<>();
        java.lang.ref.PhantomReference<ByteBuffer> ref =
                new java.lang.ref.PhantomReference<>(ByteBuffer.allocateDirect(SIZE), queue);
        long deadline = System.nanoTime() + 30_000_000_000L;
        Map<String, Long> after = before;
        while (System.nanoTime() - deadline < 0) {
            System.gc();
            Thread.sleep(50);
            after = BeanReads.freshAllocator(COUNTERS);
            boolean collected = queue.poll() != null;
            if (collected && (before.isEmpty() || after.get("Frees") > before.get("Frees"))) {
                break;
            }
        }
        ref.clear();
        report("GC", before, after, after);
        return false;
    }

    /** sun.nio.ch.Util's per-thread temporary buffer: taken by a write of a heap buffer, freed at the thread's end. */
    private static boolean temporaryBuffer() throws Exception {
        Map<String, Long> before = BeanReads.freshAllocator(COUNTERS);
        java.nio.file.Path file = java.nio.file.Files.createTempFile("release-paths", ".bin");
        Throwable[] failure = new Throwable[1];
        Thread writer = new Thread(() -> {
            try (java.nio.channels.FileChannel ch = java.nio.channels.FileChannel.open(file,
                    java.nio.file.StandardOpenOption.WRITE)) {
                ch.write(ByteBuffer.wrap(new byte[SIZE]));
            } catch (Throwable t) {
                failure[0] = t;
            }
        }, "release-paths-writer");
        writer.start();
        writer.join();
        java.nio.file.Files.delete(file);
        if (failure[0] != null) {
            System.out.println("release-paths: FAIL temporary buffer " + failure[0]);
            return true;
        }
        Map<String, Long> after = BeanReads.freshAllocator(COUNTERS);
        report("temporary buffer at thread end", before, after, after);
        return false;
    }

    private static boolean views() throws Exception {
        Map<String, Long> before = BeanReads.freshAllocator(COUNTERS);
        ByteBuffer root = ByteBuffer.allocateDirect(SIZE);
        for (int i = 0; i < SIZE; i++) {
            root.put(i, (byte) 0xAB);
        }
        java.util.List<java.nio.Buffer> views = new java.util.ArrayList<>(java.util.List.of(root.duplicate(),
                root.slice(16, 256), root.asReadOnlyBuffer(), root.asLongBuffer()));
        java.lang.ref.ReferenceQueue<ByteBuffer> queue = new java.lang.ref.ReferenceQueue<>();
        java.lang.ref.PhantomReference<ByteBuffer> ref = new java.lang.ref.PhantomReference<>(root, queue);
        root = null;
        for (int round = 0; round < 10; round++) {
            System.gc();
            Thread.sleep(20);
            ByteBuffer other = ByteBuffer.allocateDirect(SIZE);
            for (int i = 0; i < SIZE; i++) {
                other.put(i, (byte) 0xFF);
            }
            Cleaners.invokeCleaner(other);
        }
        Map<String, Long> whileViewsLive = BeanReads.freshAllocator(COUNTERS);
        boolean kept = true;
        for (java.nio.Buffer v : views) {
            if (v instanceof ByteBuffer) {
                ByteBuffer bv = (ByteBuffer) v;
                for (int i = 0; i < bv.capacity(); i++) {
                    kept &= bv.get(i) == (byte) 0xAB;
                }
            } else {
                java.nio.LongBuffer lv = (java.nio.LongBuffer) v;
                for (int i = 0; i < lv.capacity(); i++) {
                    kept &= lv.get(i) == 0xABABABABABABABABL;
                }
            }
        }
        boolean viewRefused;
        try {
            Cleaners.invokeCleaner((ByteBuffer) views.get(0));
            viewRefused = false;
        } catch (IllegalArgumentException expected) {
            viewRefused = "duplicate or slice".equals(expected.getMessage());
        }
        views.clear();
        long deadline = System.nanoTime() + 30_000_000_000L;
        Map<String, Long> after = whileViewsLive;
        while (System.nanoTime() - deadline < 0) {
            System.gc();
            Thread.sleep(50);
            after = BeanReads.freshAllocator(COUNTERS);
            if (queue.poll() != null && (before.isEmpty() || after.get("GcFrees") > whileViewsLive.get("GcFrees"))) {
                break;
            }
        }
        ref.clear();
        // the ten "other" buffers come and go in between: count the root's frees by GcFrees only
        System.out.println("release-paths: views gcWhileViewsLive=" + delta(before, whileViewsLive, "GcFrees")
                + " contentsKept=" + kept + " viewRefused=" + viewRefused + " gcAfterViewsDropped="
                + delta(whileViewsLive, after, "GcFrees"));
        return !kept || !viewRefused;
    }

    private static String delta(Map<String, Long> from, Map<String, Long> to, String counter) {
        return from.isEmpty() || to.isEmpty() ? "?" : String.valueOf(to.get(counter) - from.get(counter));
    }
}
