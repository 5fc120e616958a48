package io.kmem4j.agent.pool;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;

/**
 * The presets of the configuration key {@code presets}: named sets of {@link PoolSpec}s for a
 * library's own buffer pools, made for several versions of that library at once (a pool that does
 * not fit the version present is left alone quietly).
 *
 * <p>Immutable; any thread.
 */
public final class Presets {
    /**
     * Netty's pooled and adaptive allocators' direct buffers from kmem4j ({@code io.kmem4j.agent.netty}):
     * no pool spec, a rewrite of its own.
     */
    public static final String NETTY_ALLOCATOR = "netty-allocator";
    /** Preset name -> its pools. Netty: see {@link #netty()}. */
    private static final Map<String, List<PoolSpec>> BY_NAME = byName();

    private Presets() {
    }

    /** In a fixed order: error messages list the names. */
    private static Map<String, List<PoolSpec>> byName() {
        final Map<String, List<PoolSpec>> m = new LinkedHashMap<>();
        m.put("netty", netty());
        m.put(NETTY_ALLOCATOR, List.of());
        return java.util.Collections.unmodifiableMap(m);
    }

    /** @return the preset names, for messages. */
    public static Set<String> names() {
        return BY_NAME.keySet();
    }

    /**
     * @param value the value of {@code presets}, as {@link #resolve} takes it
     * @return true when it names {@value #NETTY_ALLOCATOR}
     */
    public static boolean nettyAllocator(final String value) {
        for (final String raw : value.split("[,;]")) {
            if (NETTY_ALLOCATOR.equals(raw.trim().toLowerCase(Locale.ROOT))) {
                return true;
            }
        }
        return false;
    }

    /**
     * Resolves preset names ({@code netty}, {@code netty-allocator}) separated by commas or semicolons.
     *
     * @throws IllegalArgumentException naming the unknown preset
     */
    public static List<PoolSpec> resolve(final String value) {
        final Map<String, List<PoolSpec>> chosen = new LinkedHashMap<>();
        for (final String raw : value.split("[,;]")) {
            final String name = raw.trim().toLowerCase(Locale.ROOT);
            if (name.isEmpty()) {
                continue;
            }
            final List<PoolSpec> pools = BY_NAME.get(name);
            if (pools == null) {
                throw new IllegalArgumentException("unknown preset '" + raw.trim() + "'");
            }
            chosen.put(name, pools);
        }
        final List<PoolSpec> all = new ArrayList<>();
        chosen.values().forEach(all::addAll);
        return all;
    }

    /**
     * Netty's "no cleaner" direct buffers (used when Netty may call {@code DirectByteBuffer(long, int)},
     * i.e. {@code -Dio.netty.tryReflectionSetAccessible=true} and {@code java.nio} opened). Both lines
     * allocate and resize in {@code PlatformDependent0} and count the bytes in
     * {@code PlatformDependent.DIRECT_MEMORY_COUNTER} around those calls; their release methods free
     * with {@code Unsafe.freeMemory(address)} and then decrement the counter. The release members are
     * therefore {@code +original}: kmem4j takes its buffer back (its address becomes 0), then Netty's
     * body runs, frees address 0 (a no-op) and decrements its counter, so the counter stays exact.
     * {@code freeDirectBuffer} (the JDK cleaner path) is taken over for kmem4j's buffers, which it
     * could not free when they have no cleaner.
     */
    private static List<PoolSpec> netty() {
        final String pd0 = "io.netty.util.internal.PlatformDependent0#";
        final String pd = "io.netty.util.internal.PlatformDependent#";
        final String allocate = pd0 + "allocateDirectNoCleaner(int)/" + pd0
            + "reallocateDirectNoCleaner(java.nio.ByteBuffer,int)/";
        return List.of(
            new PoolSpec("netty-4.1", PoolSpec.parsePools(allocate + pd + "freeDirectNoCleaner(java.nio.ByteBuffer)+original/"
                + pd + "freeDirectBuffer(java.nio.ByteBuffer)").get(0).members, true),
            new PoolSpec("netty-4.2", PoolSpec.parsePools(allocate
                + "io.netty.util.internal.DirectCleaner$CleanableDirectBufferImpl#clean()+original/"
                + "io.netty.util.internal.DirectCleaner#freeDirectBuffer(java.nio.ByteBuffer)/"
                + pd + "freeDirectBuffer(java.nio.ByteBuffer)").get(0).members, true));
    }

}
