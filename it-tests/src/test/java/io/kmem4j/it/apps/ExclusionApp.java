package io.kmem4j.it.apps;

import io.kmem4j.it.apps.excluded.ExcludedAllocator;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.lang.reflect.Field;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.function.IntFunction;

/**
 * Caller exclusions ({@code excludeCallers=io.kmem4j.it.apps.excluded.}): prints kmem4j's
 * {@code Allocations} delta around 1000 direct allocations from each caller:
 * <pre>
 * exclusion: excluded=0 included=1000 indirect=1000     (-1 each without the agent)
 * </pre>
 * With {@code --measure excluded} or {@code --measure included} it then prints what one caller
 * costs, by simple measurement (no JMH; one caller per JVM so that the other's buffers do not change
 * the JIT's profile of the release path):
 * <pre>
 * exclusion: class-load ns=..      (defining the caller's class in 2000 fresh loaders, per class)
 * exclusion: allocate ns/op=..     (allocateDirect(256) + invokeCleaner through the caller, best of 10 rounds)
 * </pre>
 */
public final class ExclusionApp {
    private static final int CALLS = 1000;

    private ExclusionApp() {
    }

    public static void main(String[] args) throws Exception {
        BeanReads.awaitAllocator(5000);
        System.out.println("exclusion: excluded=" + delta(ExcludedAllocator::allocate) + " included="
                + delta(IncludedAllocator::allocate) + " indirect=" + delta(ExcludedAllocator::viaHelper));
        int measure = List.of(args).indexOf("--measure");
        if (measure >= 0) {
            boolean excluded = args[measure + 1].equals("excluded");
            System.out.println("exclusion: class-load ns="
                    + classLoadNanos(excluded ? ExcludedAllocator.class : IncludedAllocator.class));
            System.out.println("exclusion: allocate ns/op="
                    + allocateNanos(excluded ? ExcludedAllocator::allocate : IncludedAllocator::allocate));
        }
        System.out.println("exclusion: ok");
    }

    private static long delta(IntFunction<ByteBuffer> caller) throws Exception {
        Map<String, Long> before = BeanReads.freshAllocator("Allocations");
        List<ByteBuffer> keep = new ArrayList<>();
        for (int i = 0; i < CALLS; i++) {
            keep.add(caller.apply(512));
        }
        Map<String, Long> after = BeanReads.freshAllocator("Allocations");
        java.lang.ref.Reference.reachabilityFence(keep);
        return before.isEmpty() ? -1 : after.get("Allocations") - before.get("Allocations");
    }

    /** Nanoseconds per definition + initialization of {@code type}'s class file in a fresh loader. */
    private static long classLoadNanos(Class<?> type) throws Exception {
        byte[] bytes;
        try (InputStream in = type.getResourceAsStream(type.getSimpleName() + ".class")) {
            bytes = in.readAllBytes();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        int loaders = 2000;
        long start = System.nanoTime();
        for (int i = 0; i < loaders; i++) {
            OneClassLoader l = new OneClassLoader(type.getName(), bytes);
            Class.forName(type.getName(), true, l);
        }
        return (System.nanoTime() - start) / loaders;
    }

    /** Defines one class from bytes itself; everything else from the application loader. */
    static final class OneClassLoader extends ClassLoader {
        private final String name;
        private final byte[] bytes;

        OneClassLoader(String name, byte[] bytes) {
            super(ExclusionApp.class.getClassLoader());
            this.name = name;
            this.bytes = bytes;
        }

        @Override
        protected Class<?> loadClass(String n, boolean resolve) throws ClassNotFoundException {
            if (!n.equals(name)) {
                return super.loadClass(n, resolve);
            }
            synchronized (getClassLoadingLock(n)) {
                Class<?> c = findLoadedClass(n);
                return c != null ? c : defineClass(n, bytes, 0, bytes.length);
            }
        }
    }

    /** Best of 10 rounds of 200 000 allocateDirect(256) + invokeCleaner through {@code caller}, ns/op. */
    private static double allocateNanos(IntFunction<ByteBuffer> caller) throws Exception {
        Field f = Class.forName("sun.misc.Unsafe").getDeclaredField("theUnsafe");
        f.setAccessible(true);
        sun.misc.Unsafe unsafe = (sun.misc.Unsafe) f.get(null);
        int n = 200_000;
        double best = Double.MAX_VALUE;
        for (int round = 0; round < 10; round++) {
            long start = System.nanoTime();
            for (int i = 0; i < n; i++) {
                ByteBuffer b = caller.apply(256);
                b.put(0, (byte) i);
                unsafe.invokeCleaner(b);
            }
            best = Math.min(best, (System.nanoTime() - start) / (double) n);
        }
        return Math.round(best * 10) / 10.0;
    }
}
