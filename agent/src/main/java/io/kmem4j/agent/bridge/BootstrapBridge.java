package io.kmem4j.agent.bridge;

import java.lang.invoke.MethodHandles;
import java.lang.reflect.Field;
import java.lang.reflect.Method;
import java.lang.reflect.Modifier;
import java.nio.ByteBuffer;
import java.util.function.BiConsumer;
import java.util.function.BiFunction;
import java.util.function.IntFunction;
import java.util.function.LongFunction;
import java.util.function.Predicate;
import java.util.function.UnaryOperator;


/**
 * The only kmem4j class visible to {@code java.base} and to every class loader:
 * {@code java.nio.Kmem4jBridge}, defined inside the {@code java.nio} package at run time, holding
 * JDK-typed fields only:
 *
 * <pre>
 *   public final class java.nio.Kmem4jBridge {
 *       public static volatile IntFunction allocator;  // allocateDirect: capacity -> ByteBuffer, or null for "JDK"
 *       public static volatile LongFunction explicit;  // pool allocation: size -> explicit ByteBuffer, or null for "the pool's own"
 *       public static volatile Predicate release;      // pool release: kmem4j's buffer released now -> true (skip the body)
 *       public static volatile Predicate releaseThenOriginal; // the same for +original releases (see pool.PoolReleaseAdvice)
 *       public static volatile BiFunction resize;      // pool resize: (ByteBuffer, Long) -> see pool.PoolResizeAdvice
 *       public static volatile BiConsumer resized;     // pool resize done: (what resize answered, the body's result or null)
 *       public static volatile Object cleanerMark;     // the mark of kmem4j's cleaners outside the JDK's list (see JdkClassTransformer)
 *       public static volatile UnaryOperator bufferPools = UnaryOperator.identity(); // the platform's buffer pools -> the same with kmem4j's (see PlatformBufferPool)
 *       public static volatile BiFunction nettyBuffer; // Netty's newDirectBuffer: (allocator, Long max<<32|initial) -> ByteBuf, or null for Netty's own (see netty.NettyBuffers)
 *       public static ByteBuffer allocateDirectJdk(int capacity) { return new DirectByteBuffer(capacity); }
 *       public static ByteBuffer allocateDirect(int capacity) {   // ByteBuffer.allocateDirect's body once rewritten
 *           IntFunction f = allocator;
 *           if (f != null) { Object b = f.apply(capacity); if (b != null) return (ByteBuffer) b; }
 *           return allocateDirectJdk(capacity);
 *       }
 *   }
 * </pre>
 *
 * Advice inlined into {@code ByteBuffer.allocateDirect} and into pool methods reads these fields; it
 * can see only bootstrap types, so the agent's classes stay on their own class loader.
 * {@code allocateDirectJdk} is the JDK's own {@code allocateDirect} body, for call sites in excluded
 * callers. A second agent instance (attach after {@code -javaagent}) finds the class already defined
 * and reuses it. The class file is written at build time ({@link BridgeClassFile}) and read from the
 * agent jar, so that no bytecode library runs at start-up.
 */
public final class BootstrapBridge {
    static final String CLASS_NAME = "java.nio.Kmem4jBridge";
    static final String FIELD_NAME = "allocator";
    static final String EXPLICIT = "explicit";
    static final String RELEASE = "release";
    static final String RELEASE_THEN_ORIGINAL = "releaseThenOriginal";
    static final String RESIZE = "resize";
    static final String RESIZED = "resized";
    static final String CLEANER_MARK = "cleanerMark";
    static final String BUFFER_POOLS = "bufferPools";
    static final String NETTY_BUFFER = "nettyBuffer";
    public static final String JDK_ALLOCATE = "allocateDirectJdk";
    static final String ALLOCATE_DIRECT = "allocateDirect";
    /** The bridge's class file, written at build time by {@link BridgeClassFile} (no ASM at start-up). */
    static final String CLASS_FILE = "Kmem4jBridge.bin";

    /** The bridge's members, resolved and shape-checked. */
    public static final class Members {
        public final BridgeField allocator;
        public final BridgeField explicit;
        public final BridgeField release;
        public final BridgeField releaseThenOriginal;
        public final BridgeField resize;
        public final BridgeField resized;
        public final BridgeField cleanerMark;
        public final BridgeField bufferPools;
        /** {@code nettyBuffer}, or {@code null} in a bridge an older kmem4j defined. */
        public final BridgeField nettyBuffer;
        public final Method allocateDirectJdk;
        /** {@code allocateDirect(int)}, or {@code null} in a bridge an older kmem4j defined. */
        public final Method allocateDirect;

        private Members(final Class<?> bridge) throws ReflectiveOperationException {
            allocator = field(bridge, FIELD_NAME, IntFunction.class);
            explicit = field(bridge, EXPLICIT, LongFunction.class);
            release = field(bridge, RELEASE, Predicate.class);
            releaseThenOriginal = field(bridge, RELEASE_THEN_ORIGINAL, Predicate.class);
            resize = field(bridge, RESIZE, BiFunction.class);
            resized = field(bridge, RESIZED, BiConsumer.class);
            cleanerMark = field(bridge, CLEANER_MARK, Object.class);
            bufferPools = field(bridge, BUFFER_POOLS, UnaryOperator.class);
            nettyBuffer = optionalField(bridge, NETTY_BUFFER, BiFunction.class);
            allocateDirectJdk = bridge.getMethod(JDK_ALLOCATE, int.class);
            allocateDirect = optional(bridge, ALLOCATE_DIRECT);
        }

        private static Method optional(final Class<?> bridge, final String name) {
            try {
                final Method m = bridge.getMethod(name, int.class);
                return Modifier.isStatic(m.getModifiers()) && m.getReturnType() == ByteBuffer.class ? m : null;
            } catch (final NoSuchMethodException older) {
                return null;
            }
        }

        private static BridgeField optionalField(final Class<?> bridge, final String name, final Class<?> type)
            throws NoSuchFieldException {
            try {
                bridge.getField(name);
            } catch (final NoSuchFieldException older) {
                return null;
            }
            return field(bridge, name, type);
        }

        private static BridgeField field(final Class<?> bridge, final String name, final Class<?> type)
            throws NoSuchFieldException {
            final Field f = bridge.getField(name);
            if (!Modifier.isStatic(f.getModifiers()) || Modifier.isFinal(f.getModifiers()) || f.getType() != type) {
                throw new NoSuchFieldException(CLASS_NAME + "." + name + " has an unexpected shape: " + f);
            }
            return new BridgeField(f);
        }
    }

    private BootstrapBridge() {
    }

    /**
     * @return the bridge's members, defining the class on first use
     * @throws ReflectiveOperationException when {@code java.nio} is not open to the agent, or a bridge
     *         of another shape is already defined
     */
    public static Members members() throws ReflectiveOperationException {
        Class<?> bridge;
        try {
            bridge = Class.forName(CLASS_NAME, false, null);
        } catch (final ClassNotFoundException notYet) {
            final byte[] bytes = classFile();
            try {
                bridge = MethodHandles.privateLookupIn(ByteBuffer.class, MethodHandles.lookup()).defineClass(bytes);
            } catch (final LinkageError raced) {
                bridge = Class.forName(CLASS_NAME, false, null);
            }
        }
        return new Members(bridge);
    }

    /** The class file built with the agent, or (a build without it: tests from an IDE) one written now. */
    private static byte[] classFile() {
        try (java.io.InputStream in = BootstrapBridge.class.getResourceAsStream(CLASS_FILE)) {
            if (in != null) {
                return in.readAllBytes();
            }
        } catch (final java.io.IOException unreadable) {
            // write it now
        }
        return BridgeClassFile.classBytes();
    }
}
