package io.kmem4j.it.apps;

import java.lang.reflect.Field;
import java.lang.reflect.Method;
import java.lang.reflect.Modifier;
import java.net.URL;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeSet;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.IntFunction;

/**
 * Uses the application's own buffer pool {@link UserPool} (and {@link BadPool}, and
 * {@link EarlyCaller}) as any program would; prints what its own code did:
 * <pre>
 * pool: loaded-before-kmem4j=UserPool,EarlyCaller    (with EarlyAgent in front of the agent; "none" otherwise)
 * pool: takes=2000 verified=true own-takes=.. own-gives=.. pooled=..
 * pool: foreign heap own-gives+1 / jdk-direct own-gives+1 / slice &lt;outcome&gt;
 * pool: child-first own-takes=..                      (a second copy of UserPool in a child-first loader)
 * pool: bad-pool own-takes=..
 * pool: early-caller allocations-delta=..             (kmem4j's Allocations around 1000 EarlyCaller calls; -1 without the agent)
 * pool: bridge fields=[..] methods=[..]               (java.nio.Kmem4jBridge, "none" without the agent)
 * pool: ok
 * </pre>
 * then, with {@code --hold}, {@code pool: holding} until stdin ends.
 */
public final class PoolApp {
    static final int TAKES = 2000;
    static final int[] SIZES = {100, 4096, 65_536, 200_000};

    private PoolApp() {
    }

    public static void main(String[] args) throws Exception {
        BeanReads.awaitAllocator(5000);
        System.out.println("pool: loaded-before-kmem4j=" + System.getProperty(EarlyAgent.PROPERTY, "none"));
        UserPool pool = new UserPool();
        List<ByteBuffer> taken = new ArrayList<>();
        for (int i = 0; i < TAKES; i++) {
            ByteBuffer b = pool.take(SIZES[i % SIZES.length]);
            for (int j = 0; j < b.capacity(); j += 97) {
                b.put(j, (byte) (i + j));
            }
            taken.add(b);
        }
        boolean verified = true;
        for (int i = 0; i < TAKES; i++) {
            ByteBuffer b = taken.get(i);
            verified &= b.capacity() == SIZES[i % SIZES.length];
            for (int j = 0; j < b.capacity(); j += 97) {
                verified &= b.get(j) == (byte) (i + j);
            }
        }
        ByteBuffer kept = taken.get(0);
        for (ByteBuffer b : taken.subList(1, taken.size())) {
            pool.give(b);
        }
        System.out.println("pool: takes=" + TAKES + " verified=" + verified + " own-takes=" + UserPool.OWN_TAKES
                + " own-gives=" + UserPool.OWN_GIVES + " pooled=" + pool.pooled());

        long gives = UserPool.OWN_GIVES.get();
        pool.give(ByteBuffer.allocate(64));
        System.out.println("pool: foreign heap own-gives+" + (UserPool.OWN_GIVES.get() - gives));
        gives = UserPool.OWN_GIVES.get();
        pool.give(ByteBuffer.allocateDirect(1 << 20));
        System.out.println("pool: foreign jdk-direct own-gives+" + (UserPool.OWN_GIVES.get() - gives));
        gives = UserPool.OWN_GIVES.get();
        String outcome;
        try {
            pool.give(kept.slice(10, 20));
            outcome = "accepted";
        } catch (IllegalArgumentException e) {
            outcome = "IllegalArgumentException: " + e.getMessage();
        }
        System.out.println("pool: foreign slice " + outcome + " own-gives+" + (UserPool.OWN_GIVES.get() - gives));
        pool.give(kept);

        System.out.println("pool: child-first own-takes=" + childFirst());
        BadPool bad = new BadPool();
        for (int i = 0; i < 10; i++) {
            bad.take(100);
        }
        System.out.println("pool: bad-pool own-takes=" + BadPool.OWN_TAKES);
        System.out.println("pool: early-caller allocations-delta=" + earlyCaller());
        System.out.println("pool: bridge " + bridge());
        System.out.println("pool: ok");
        if (List.of(args).contains("--hold")) {
            System.out.println("pool: holding");
            while (System.in.read() >= 0) {
                // until EOF
            }
        }
    }

    /** A second UserPool, defined by a child-first loader: 100 takes and gives; its own take count. */
    private static long childFirst() throws Exception {
        URL location = PoolApp.class.getProtectionDomain().getCodeSource().getLocation();
        try (ChildFirstApp.ChildFirstLoader loader = new ChildFirstApp.ChildFirstLoader(new URL[] {location},
                ClassLoader.getPlatformClassLoader())) {
            Class<?> type = Class.forName(UserPool.class.getName(), true, loader);
            if (type == UserPool.class) {
                throw new IllegalStateException("not a second copy");
            }
            Object copy = type.getConstructor().newInstance();
            Method take = type.getMethod("take", int.class);
            Method give = type.getMethod("give", ByteBuffer.class);
            for (int i = 0; i < 100; i++) {
                give.invoke(copy, take.invoke(copy, 1000));
            }
            return ((AtomicLong) type.getField("OWN_TAKES").get(null)).get();
        }
    }

    /** kmem4j's Allocations around 1000 EarlyCaller.allocate(512) calls (the buffers are kept alive). */
    private static long earlyCaller() throws Exception {
        Map<String, Long> before = BeanReads.freshAllocator("Allocations");
        List<ByteBuffer> keep = new ArrayList<>();
        IntFunction<ByteBuffer> early = EarlyCaller::allocate;
        for (int i = 0; i < 1000; i++) {
            keep.add(early.apply(512));
        }
        Map<String, Long> after = BeanReads.freshAllocator("Allocations");
        java.lang.ref.Reference.reachabilityFence(keep);
        return before.isEmpty() ? -1 : after.get("Allocations") - before.get("Allocations");
    }

    /** The shape of java.nio.Kmem4jBridge: its fields' types and its methods. */
    private static String bridge() {
        Class<?> bridge;
        try {
            bridge = Class.forName("java.nio.Kmem4jBridge", false, null);
        } catch (ClassNotFoundException e) {
            return "none";
        }
        TreeSet<String> fields = new TreeSet<>();
        for (Field f : bridge.getDeclaredFields()) {
            fields.add(Modifier.toString(f.getModifiers()) + " " + f.getType().getName() + " " + f.getName());
        }
        TreeSet<String> methods = new TreeSet<>();
        for (Method m : bridge.getDeclaredMethods()) {
            methods.add(Modifier.toString(m.getModifiers()) + " " + m.getReturnType().getName() + " " + m.getName());
        }
        return "fields=" + fields + " methods=" + methods;
    }
}
