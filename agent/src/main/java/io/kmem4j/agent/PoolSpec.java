package io.kmem4j.agent;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * A buffer pool whose memory kmem4j serves: its allocation, resize and release methods
 * ({@link PoolMember}), from the configuration key {@code pools} or from a preset ({@code presets}).
 *
 * <pre>
 *   pools   = pool [ ';' pool ]...
 *   pool    = member '/' member [ '/' member ]...
 *   member  = Class '#' method '(' [ type [ ',' type ]... ] ')' [ '+original' ]
 * </pre>
 *
 * Example: {@code com.acme.Pool#take(int)/com.acme.Pool#give(java.nio.ByteBuffer)}. A user pool that
 * does not fit when its classes are seen is left alone with one WARN line; a preset's pools are made
 * for several library versions, so the ones that do not fit a version are left alone quietly.
 *
 * <p>Immutable; any thread.
 */
final class PoolSpec {
    /** The presets and what they expand to. Netty: see {@link #netty()}. */
    static final Map<String, List<PoolSpec>> PRESETS = Map.of("netty", netty());

    final String name;
    final List<PoolMember> members;
    /** A preset's pool: not fitting a library version is expected, so it is logged at debug only. */
    final boolean quiet;

    PoolSpec(final String name, final List<PoolMember> members, final boolean quiet) {
        this.name = name;
        this.members = List.copyOf(members);
        this.quiet = quiet;
    }

    /**
     * Parses the value of {@code pools}.
     *
     * @throws IllegalArgumentException naming the malformed part
     */
    static List<PoolSpec> parsePools(final String value) {
        final List<PoolSpec> pools = new ArrayList<>();
        for (final String pool : value.split(";")) {
            if (pool.isBlank()) {
                continue;
            }
            final List<PoolMember> members = new ArrayList<>();
            for (final String member : pool.split("/")) {
                members.add(PoolMember.parse(member));
            }
            if (members.size() < 2) {
                throw new IllegalArgumentException("'" + pool.trim() + "' names one method; a pool needs an"
                    + " allocation and a release method separated by '/'");
            }
            pools.add(new PoolSpec(pool.trim(), members, false));
        }
        return pools;
    }

    /**
     * Resolves preset names ({@code netty}) separated by commas or semicolons.
     *
     * @throws IllegalArgumentException naming the unknown preset
     */
    static List<PoolSpec> presets(final String value) {
        final Map<String, List<PoolSpec>> chosen = new LinkedHashMap<>();
        for (final String raw : value.split("[,;]")) {
            final String name = raw.trim().toLowerCase(Locale.ROOT);
            if (name.isEmpty()) {
                continue;
            }
            final List<PoolSpec> pools = PRESETS.get(name);
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
            new PoolSpec("netty-4.1", parsePools(allocate + pd + "freeDirectNoCleaner(java.nio.ByteBuffer)+original/"
                + pd + "freeDirectBuffer(java.nio.ByteBuffer)").get(0).members, true),
            new PoolSpec("netty-4.2", parsePools(allocate
                + "io.netty.util.internal.DirectCleaner$CleanableDirectBufferImpl#clean()+original/"
                + "io.netty.util.internal.DirectCleaner#freeDirectBuffer(java.nio.ByteBuffer)/"
                + pd + "freeDirectBuffer(java.nio.ByteBuffer)").get(0).members, true));
    }

    @Override
    public String toString() {
        return name;
    }
}
