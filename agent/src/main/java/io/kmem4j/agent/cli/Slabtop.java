package io.kmem4j.agent.cli;

import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Locale;

/**
 * The data and the text of {@code slabtop}: one {@link Frame} (the Allocator bean's totals and one
 * {@link Cache} per SlabCache bean) formatted like Linux {@code slabtop} (procps), e.g.
 *
 * <pre>
 *  Active / Total Objects (% used)    : 386 / 1392 (27.7%)
 *  Total / Partial Slabs              : 42 / 6
 *  Active / Total Caches (% used)     : 7 / 36 (19.4%)
 *  Active / Total Size (% used)       : 1730.50K / 8192.00K (21.1%)
 *  Bytes In Use / Reserved (% used)   : 1524.06K / 8200.00K (18.6%)
 *  Magazine Hit Rate                  : 96.9% (allocations 3012, frees 2626, live 386, fallbacks 3)
 *
 *   OBJS ACTIVE  USE OBJ SIZE  SLABS OBJ/SLAB CACHE SIZE NAME
 *    128    100  78%    4.00K      8       16       512K kmem4j-4096
 * </pre>
 *
 * OBJS is {@code TotalObjects}, ACTIVE {@code ActiveObjects}, USE their ratio, OBJ SIZE
 * {@code ObjectSize}, SLABS {@code Slabs}, OBJ/SLAB {@code ObjectsPerSlab} and CACHE SIZE
 * {@code SlabBytes} (slabs of 64 KiB pages), in KiB. Pure functions; no JMX here.
 */
final class Slabtop {
    /** The column header of the cache rows, as in procps {@code slabtop}. */
    static final String COLUMNS = "  OBJS ACTIVE  USE OBJ SIZE  SLABS OBJ/SLAB CACHE SIZE NAME";

    private Slabtop() {
    }

    /** Row order. */
    enum Sort {
        /** Most active objects first (ties: most objects, then smallest object size). */
        ACTIVE("active objects", Comparator.comparingLong(Cache::active).reversed()
            .thenComparing(Comparator.comparingLong(Cache::objs).reversed())),
        /** Largest cache (memory held in slabs) first (ties: most active objects, then smallest object size). */
        SIZE("cache size", Comparator.comparingLong(Cache::cacheBytes).reversed()
            .thenComparing(Comparator.comparingLong(Cache::active).reversed())),
        /** Most allocations since start first (ties: smallest object size). */
        ALLOCS("allocations since start", Comparator.comparingLong(Cache::allocations).reversed());

        final String description;
        final Comparator<Cache> order;

        Sort(final String description, final Comparator<Cache> order) {
            this.description = description;
            this.order = order.thenComparingInt(Cache::objSize).thenComparing(Cache::name);
        }

        /**
         * @param text {@code active}, {@code size} or {@code allocs}, any case
         * @return the sort
         * @throws IllegalArgumentException for anything else
         */
        static Sort parse(final String text) {
            for (final Sort s : values()) {
                if (s.name().equalsIgnoreCase(text.trim())) {
                    return s;
                }
            }
            throw new IllegalArgumentException("'" + text + "' is not a sort order; use active, size or allocs");
        }
    }

    /**
     * One SlabCache bean.
     *
     * @param name        cache name ({@code Name})
     * @param objs        {@code TotalObjects}
     * @param active      {@code ActiveObjects}
     * @param objSize     {@code ObjectSize}, bytes
     * @param slabs       {@code Slabs}
     * @param objPerSlab  {@code ObjectsPerSlab}
     * @param cacheBytes  {@code SlabBytes}
     * @param allocations {@code Allocations}
     */
    record Cache(String name, long objs, long active, int objSize, long slabs, int objPerSlab, long cacheBytes,
                 long allocations) {
        /** @return {@code active / objs} in percent, 0 for an empty cache */
        double usePercent() {
            return objs == 0 ? 0.0 : 100.0 * active / objs;
        }
    }

    /**
     * The Allocator bean's figures and the caches, read together.
     *
     * @param allocations     {@code Allocations}
     * @param frees           {@code Frees}
     * @param liveBuffers     {@code LiveBuffers}
     * @param bytesInUse      {@code BytesInUse}
     * @param bytesReserved   {@code BytesReserved}
     * @param magazineHitRate {@code MagazineHitRate}, 0..1
     * @param fallbacks       {@code Fallbacks}
     * @param caches          one entry per SlabCache bean, any order
     */
    record Frame(long allocations, long frees, long liveBuffers, long bytesInUse, long bytesReserved,
                 double magazineHitRate, long fallbacks, List<Cache> caches) {
        Frame {
            caches = List.copyOf(caches);
        }

        long activeObjects() {
            return caches.stream().mapToLong(Cache::active).sum();
        }

        long totalObjects() {
            return caches.stream().mapToLong(Cache::objs).sum();
        }

        long slabs() {
            return caches.stream().mapToLong(Cache::slabs).sum();
        }

        long activeCaches() {
            return caches.stream().filter(c -> c.active() > 0).count();
        }

        long activeBytes() {
            return caches.stream().mapToLong(c -> c.active() * c.objSize()).sum();
        }

        long cacheBytes() {
            return caches.stream().mapToLong(Cache::cacheBytes).sum();
        }
    }

    /**
     * @param frame        the figures
     * @param partialSlabs sum of {@code PartialSlabs}
     * @param sort         row order
     * @param title        first line (e.g. which pid, which sort), or null for none
     * @return the whole screen, lines ending with {@code \n}
     */
    static String format(final Frame frame, final long partialSlabs, final Sort sort, final String title) {
        final StringBuilder sb = new StringBuilder(4096);
        if (title != null) {
            sb.append(' ').append(title).append('\n');
        }
        line(sb, " Active / Total Objects (%% used)    : %d / %d (%.1f%%)", frame.activeObjects(), frame.totalObjects(),
            percent(frame.activeObjects(), frame.totalObjects()));
        line(sb, " Total / Partial Slabs              : %d / %d", frame.slabs(), partialSlabs);
        line(sb, " Active / Total Caches (%% used)     : %d / %d (%.1f%%)", frame.activeCaches(), frame.caches().size(),
            percent(frame.activeCaches(), frame.caches().size()));
        line(sb, " Active / Total Size (%% used)       : %.2fK / %.2fK (%.1f%%)", kib(frame.activeBytes()),
            kib(frame.cacheBytes()), percent(frame.activeBytes(), frame.cacheBytes()));
        line(sb, " Bytes In Use / Reserved (%% used)   : %.2fK / %.2fK (%.1f%%)", kib(frame.bytesInUse()),
            kib(frame.bytesReserved()), percent(frame.bytesInUse(), frame.bytesReserved()));
        line(sb, " Magazine Hit Rate                  : %.1f%% (allocations %d, frees %d, live %d, fallbacks %d)",
            100.0 * frame.magazineHitRate(), frame.allocations(), frame.frees(), frame.liveBuffers(), frame.fallbacks());
        sb.append('\n').append(COLUMNS).append('\n');
        for (final Cache c : sorted(frame.caches(), sort)) {
            sb.append(row(c));
            if (sort == Sort.ALLOCS) {
                // the figure the rows are sorted by, which procps' columns do not have (trial finding)
                sb.append(" (allocations ").append(c.allocations()).append(')');
            }
            sb.append('\n');
        }
        return sb.toString();
    }

    /** @return the caches in display order */
    static List<Cache> sorted(final List<Cache> caches, final Sort sort) {
        final List<Cache> rows = new ArrayList<>(caches);
        rows.sort(sort.order);
        return rows;
    }

    /** @return one row, the procps {@code slabtop} layout ({@code %6u %6u %3.0f%% %7.2fK %6u %8u %9uK %-23s}) */
    static String row(final Cache c) {
        return String.format(Locale.ROOT, "%6d %6d %3.0f%% %7.2fK %6d %8d %9dK %s", c.objs(), c.active(),
            c.usePercent(), kib(c.objSize()), c.slabs(), c.objPerSlab(), c.cacheBytes() / 1024, c.name());
    }

    private static void line(final StringBuilder sb, final String format, final Object... args) {
        sb.append(String.format(Locale.ROOT, format, args)).append('\n');
    }

    private static double percent(final long part, final long whole) {
        return whole <= 0 ? 0.0 : 100.0 * part / whole;
    }

    private static double kib(final long bytes) {
        return bytes / 1024.0;
    }
}
