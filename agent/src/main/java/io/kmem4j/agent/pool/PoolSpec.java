package io.kmem4j.agent.pool;

import java.util.ArrayList;
import java.util.List;

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
 * <p>Presets are in {@link Presets}. Immutable; any thread.
 */
public final class PoolSpec {
    public final String name;
    public final List<PoolMember> members;
    /** A preset's pool: not fitting a library version is expected, so it is logged at debug only. */
    public final boolean quiet;

    public PoolSpec(final String name, final List<PoolMember> members, final boolean quiet) {
        this.name = name;
        this.members = List.copyOf(members);
        this.quiet = quiet;
    }

    /**
     * Parses the value of {@code pools}.
     *
     * @throws IllegalArgumentException naming the malformed part
     */
    public static List<PoolSpec> parsePools(final String value) {
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

    @Override
    public String toString() {
        return name;
    }
}
