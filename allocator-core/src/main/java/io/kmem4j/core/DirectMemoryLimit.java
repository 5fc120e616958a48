package io.kmem4j.core;

/**
 * The JDK's direct-memory limit, {@code -XX:MaxDirectMemorySize} (by default the maximum heap size),
 * as {@code java.nio.Bits} counts against it: {@code jdk.internal.misc.VM.maxDirectMemory()}. The
 * agent exports {@code jdk.internal.misc} to its module before it reads its configuration; where it
 * is not exported the limit is unknown ({@link #bytes()} is -1, asked again next time) and the
 * defaults do not depend on it.
 */
final class DirectMemoryLimit {
    /** The limit once read (it never changes after the JDK's start-up), -1 until then. */
    private static volatile long bytes = -1;

    private DirectMemoryLimit() {
    }

    /** @return the limit in bytes, or -1 when it could not be read */
    static long bytes() {
        long b = bytes;
        if (b < 0) {
            b = read();
            bytes = b;
        }
        return b;
    }

    private static long read() {
        if (!Object.class.getModule().isExported("jdk.internal.misc", DirectMemoryLimit.class.getModule())) {
            return -1; // and Agrona's UnsafeApi stays untouched: its initializer would fail for good
        }
        try {
            // the static field maxDirectMemory() returns (17 to 27), read with Unsafe: no reflective call, which
            // spins LambdaForms at start-up (some 3 ms on 25)
            final java.lang.reflect.Field f = Class.forName("jdk.internal.misc.VM").getDeclaredField("directMemory");
            if (f.getType() == long.class && java.lang.reflect.Modifier.isStatic(f.getModifiers())) {
                return org.agrona.UnsafeApi.getLongVolatile(org.agrona.UnsafeApi.staticFieldBase(f),
                    org.agrona.UnsafeApi.staticFieldOffset(f));
            }
        } catch (final Throwable anotherShapeOrNotExported) {
            // the method, below
        }
        return viaMethod();
    }

    /** {@code VM.maxDirectMemory()} by reflection; -1 when {@code jdk.internal.misc} is not exported to kmem4j. */
    static long viaMethod() {
        try {
            return (long) Class.forName("jdk.internal.misc.VM").getMethod("maxDirectMemory").invoke(null);
        } catch (final Throwable notExported) {
            return -1;
        }
    }
}
