package io.kmem4j.core;

import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * Immutable configuration of a {@link SlabAllocator}. Build with {@link #builder()}; every setter
 * validates at once and {@link Builder#build()} checks the values against each other.
 *
 * <p>Errors: an invalid value throws {@link IllegalArgumentException} whose message names the key,
 * the value and the allowed range, e.g.
 * {@code "invalid kmem4j setting chunkSizeBytes=1000 (allowed: a multiple of 65536 in [524288, 1073741824] for maxSizeClassBytes=65536)"}.
 *
 * <p>Threads: instances are immutable and may be shared freely.
 */
public final class SlabAllocatorConfig {
    /** Slabs are carved from chunks in pages of this many bytes (64 KiB). */
    public static final int PAGE_SIZE_BYTES = 1 << 16;

    private final int chunkSizeBytes;
    private final int maxSizeClassBytes;
    private final int minCapacityBytes;
    private final int magazineRounds;
    private final int depotMagazines;
    private final int retainedEmptyChunks;
    private final long reapIntervalMillis;
    private final long collectAboveBytes;
    private final boolean zeroOnFree;
    private final boolean zeroing;
    private final boolean explicitLeakDetection;
    private final int siteSampleRate;
    private final List<String> siteFramesToSkip;

    /** The least {@code maxSizeClassBytes}: the smallest size class, bytes. */
    public static final int MIN_SIZE_CLASS_BYTES = SizeClasses.MIN_CLASS_BYTES;
    /** The most {@code maxSizeClassBytes}, bytes (1 MiB). */
    public static final int MAX_SIZE_CLASS_BYTES = 1 << 20;

    /**
     * Every key a text configuration may set, in the order {@link #keys()} and {@link #asMap()} list
     * them: the one list of the allocator's keys ({@link Builder#set} and {@link #value} name each once
     * more, in a switch: no lambda is spun at start-up).
     */
    private static final List<String> KEYS = List.of("chunkSizeBytes", "maxSizeClassBytes", "minCapacityBytes",
        "magazineRounds", "depotMagazines", "retainedEmptyChunks", "reapIntervalMillis", "collectAboveBytes",
        "zeroOnFree", "explicitLeakDetection", "siteSampleRate");

    private SlabAllocatorConfig(final Builder b, final int chunkSizeBytes) {
        this.siteSampleRate = b.siteSampleRate;
        this.siteFramesToSkip = List.copyOf(b.siteFramesToSkip);
        this.zeroOnFree = b.zeroOnFree;
        this.zeroing = b.zeroing;
        this.explicitLeakDetection = b.explicitLeakDetection;
        this.chunkSizeBytes = chunkSizeBytes;
        this.maxSizeClassBytes = b.maxSizeClassBytes;
        this.minCapacityBytes = b.minCapacityBytes;
        this.magazineRounds = b.magazineRounds;
        this.depotMagazines = b.depotMagazines;
        this.retainedEmptyChunks = b.retainedEmptyChunks;
        this.reapIntervalMillis = b.reapIntervalMillis;
        this.collectAboveBytes = b.collectAboveBytes;
    }

    /** @return a builder holding the defaults. */
    public static Builder builder() {
        return new Builder();
    }

    /** @return the default configuration. */
    public static SlabAllocatorConfig defaults() {
        return builder().build();
    }

    /**
     * @return bytes of off-heap memory taken from the JDK at a time: by default 4 MiB, or a sixteenth of
     *         {@code -XX:MaxDirectMemorySize} when that is less (a multiple of 64 KiB, at least one slab
     *         of the largest size class), so that a small limit still holds several chunks
     */
    public int chunkSizeBytes() {
        return chunkSizeBytes;
    }

    /**
     * @return the largest size class, the configured value rounded up to a class; larger requests
     *         go to the JDK (default 64 KiB)
     */
    public int maxSizeClassBytes() {
        return maxSizeClassBytes;
    }

    /** @return the smallest capacity served; smaller requests go to the JDK (default 1). */
    public int minCapacityBytes() {
        return minCapacityBytes;
    }

    /**
     * @return objects per magazine, M (default 32; Bonwick and Adams, USENIX 2001); caches of objects above 4 KiB use
     *         at most 8, above 128 KiB 1 (see {@code SlabCache.magazineRounds})
     */
    public int magazineRounds() {
        return magazineRounds;
    }

    /** @return full magazines a cache's depot keeps before it flushes them back to slabs (default 16). */
    public int depotMagazines() {
        return depotMagazines;
    }

    /**
     * @return wholly empty chunks kept for reuse instead of being returned to the JDK (default 1); the
     *         reaper releases empty chunks beyond this every {@link #reapIntervalMillis()}, and after an
     *         idle interval also flushes depots and empty slabs first
     */
    public int retainedEmptyChunks() {
        return retainedEmptyChunks;
    }

    /**
     * @return how often the reaper runs, in milliseconds (default 1000): it adopts dead threads' caches
     *         and gives memory beyond {@link #retainedEmptyChunks()} back to the JDK
     */
    public long reapIntervalMillis() {
        return reapIntervalMillis;
    }

    /**
     * @return bytes of reserved chunk memory (default 64 MiB; 0 turns it off) above which a thread about
     *         to add a chunk first asks for a collection ({@code System.gc()}), so that buffers the program
     *         dropped to GC come back before new memory is touched: the collection the JDK's
     *         {@code java.nio.Bits} runs only at {@code -XX:MaxDirectMemorySize}. The mark then follows the
     *         live set (twice the bytes still in use after each such collection, at least this); at most 2 %
     *         of the time goes to these pauses, none runs while the Java heap in use is larger than the bytes
     *         of kmem4j's buffers in use, and none after one that gave back less than a chunk until GC has
     *         freed a buffer of this allocator since. See {@code CollectBeforeGrowing}.
     */
    public long collectAboveBytes() {
        return collectAboveBytes;
    }

    /**
     * @return true (default) when memory is zeroed as it is released (on the releasing thread, while
     *         hot in its cache; deferred frees by the thread that takes them in) so allocation skips
     *         zeroing; false zeroes on allocation. Buffers are all zeros either way. Chosen by the ring
     *         benchmark (BENCHMARKS.md): zero-on-free was faster in 11 of 12 size/thread/flavour
     *         pairs; its cost is that a new chunk is zeroed, so all of it is resident at once.
     */
    public boolean zeroOnFree() {
        return zeroOnFree;
    }

    /**
     * @return true (default) when buffers are handed out all zeros, as {@code ByteBuffer.allocateDirect}
     *         promises; false for an allocator whose memory is handed out as its last user of this
     *         allocator left it (as Netty's pooled allocators do: no zeroing on allocation or release; an
     *         object's first hand-out from a new chunk is still zeroed, so no memory other native code
     *         used is ever seen), which must never serve {@code allocateDirect}'s callers. Not a text
     *         key: set only by code ({@link Builder#zeroing}).
     */
    public boolean zeroing() {
        return zeroing;
    }

    /**
     * @return true when explicit buffers collected without {@code free} are counted, reported and
     *         recovered (default false; costs a cleaner registration per explicit allocation)
     */
    public boolean explicitLeakDetection() {
        return explicitLeakDetection;
    }

    /**
     * @return allocation-site sampling: one allocation in this many records its call site; 0 (default)
     *         turns sampling off
     */
    public int siteSampleRate() {
        return siteSampleRate;
    }

    /**
     * @return class-name prefixes of stack frames that are never allocation sites, besides the
     *         allocator's own and {@code java.nio}'s (default none; a library or agent wrapping the
     *         allocator names its own packages)
     */
    public List<String> siteFramesToSkip() {
        return siteFramesToSkip;
    }

    /** @return the name of every key a text configuration may set ({@link Builder#set}), in a stable order. */
    public static List<String> keys() {
        return KEYS;
    }

    /** @return the effective settings by key, in the order of {@link #keys()} (for logs and JMX). */
    public Map<String, String> asMap() {
        final Map<String, String> m = new LinkedHashMap<>();
        for (final String k : KEYS) {
            m.put(k, value(k));
        }
        return m;
    }

    private String value(final String key) {
        switch (key) {
            case "chunkSizeBytes":
                return Integer.toString(chunkSizeBytes);
            case "maxSizeClassBytes":
                return Integer.toString(maxSizeClassBytes);
            case "minCapacityBytes":
                return Integer.toString(minCapacityBytes);
            case "magazineRounds":
                return Integer.toString(magazineRounds);
            case "depotMagazines":
                return Integer.toString(depotMagazines);
            case "retainedEmptyChunks":
                return Integer.toString(retainedEmptyChunks);
            case "reapIntervalMillis":
                return Long.toString(reapIntervalMillis);
            case "collectAboveBytes":
                return Long.toString(collectAboveBytes);
            case "zeroOnFree":
                return Boolean.toString(zeroOnFree);
            case "explicitLeakDetection":
                return Boolean.toString(explicitLeakDetection);
            case "siteSampleRate":
                return Integer.toString(siteSampleRate);
            default:
                throw new IllegalArgumentException("unknown kmem4j setting " + key);
        }
    }

    @Override
    public String toString() {
        return "SlabAllocatorConfig" + asMap();
    }

    static IllegalArgumentException invalid(final String key, final Object value, final String allowed) {
        return new IllegalArgumentException(
            "invalid kmem4j setting " + key + "=" + value + " (allowed: " + allowed + ")");
    }

    static long checkRange(final String key, final long value, final long min, final long max) {
        if (value < min || value > max) {
            throw invalid(key, value, "[" + min + ", " + max + "]");
        }
        return value;
    }

    /**
     * Parses {@code 4096}, {@code 64k}, {@code 4m}, {@code 1g} (binary units, case-insensitive).
     *
     * @throws NumberFormatException when {@code value} is not such a number or overflows
     */
    public static long parseSize(final String value) {
        final String v = value.trim().toLowerCase(Locale.ROOT);
        final char last = v.isEmpty() ? ' ' : v.charAt(v.length() - 1);
        final int shift = last == 'k' ? 10 : last == 'm' ? 20 : last == 'g' ? 30 : 0;
        final long n = Long.parseLong(shift == 0 ? v : v.substring(0, v.length() - 1));
        if (shift != 0 && (n > (Long.MAX_VALUE >> shift) || n < 0)) {
            throw new NumberFormatException(value);
        }
        return n << shift;
    }


    private static boolean bool(final String key, final String value) {
        if ("true".equalsIgnoreCase(value.trim())) {
            return true;
        }
        if ("false".equalsIgnoreCase(value.trim())) {
            return false;
        }
        throw invalid(key, value, "true, false");
    }

    /** Mutable builder; not thread-safe. */
    public static final class Builder {
        /** The default chunk size when {@code -XX:MaxDirectMemorySize} holds 16 of them. */
        static final int DEFAULT_CHUNK_BYTES = 4 << 20;
        /** 0 until set: the default follows the limit ({@link #build()}). */
        private int chunkSizeBytes;
        private int maxSizeClassBytes = 64 << 10;
        private int minCapacityBytes = 1;
        private int magazineRounds = 32;
        private int depotMagazines = 16;
        private int retainedEmptyChunks = 1;
        private long reapIntervalMillis = 1000;
        private long collectAboveBytes = 64L << 20;
        private boolean zeroOnFree = true;
        private boolean zeroing = true;
        private boolean explicitLeakDetection;
        private int siteSampleRate;
        private List<String> siteFramesToSkip = List.of();

        private Builder() {
        }

        /**
         * Sets a key from its text form, as configuration files and agent arguments give it: sizes
         * and counts as integers with an optional {@code k}, {@code m} or {@code g} suffix (binary),
         * switches as {@code true} or {@code false}.
         *
         * @param key   one of {@link SlabAllocatorConfig#keys()}
         * @param value its text
         * @return this builder
         * @throws IllegalArgumentException naming the key, the value and what is allowed (an unknown
         *         key: naming the known ones)
         */
        public Builder set(final String key, final String value) {
            switch (key) {
                case "chunkSizeBytes":
                    return numeric(key, value, this::chunkSizeBytes);
                case "maxSizeClassBytes":
                    return numeric(key, value, this::maxSizeClassBytes);
                case "minCapacityBytes":
                    return numeric(key, value, this::minCapacityBytes);
                case "magazineRounds":
                    return numeric(key, value, this::magazineRounds);
                case "depotMagazines":
                    return numeric(key, value, this::depotMagazines);
                case "retainedEmptyChunks":
                    return numeric(key, value, this::retainedEmptyChunks);
                case "reapIntervalMillis":
                    return numeric(key, value, this::reapIntervalMillis);
                case "collectAboveBytes":
                    return numeric(key, value, this::collectAboveBytes);
                case "zeroOnFree":
                    return zeroOnFree(bool(key, value));
                case "explicitLeakDetection":
                    return explicitLeakDetection(bool(key, value));
                case "siteSampleRate":
                    return numeric(key, value, this::siteSampleRate);
                default:
                    throw new IllegalArgumentException("unknown kmem4j setting " + key + "=" + value + " (known: "
                        + String.join(", ", keys()) + ")");
            }
        }

        /**
         * Parses a number for {@code setter}; text that is no number fails with the setter's own allowed
         * values (it rejects {@code Long.MIN_VALUE} before changing anything), so each range is written once.
         */
        private Builder numeric(final String key, final String value, final java.util.function.LongFunction<Builder> setter) {
            final long n;
            try {
                n = parseSize(value);
            } catch (final NumberFormatException e) {
                String allowed = "an integer";
                try {
                    setter.apply(Long.MIN_VALUE);
                } catch (final IllegalArgumentException range) {
                    final String m = String.valueOf(range.getMessage());
                    final int at = m.indexOf("(allowed: ");
                    if (at >= 0 && m.endsWith(")")) {
                        allowed = m.substring(at + "(allowed: ".length(), m.length() - 1);
                    }
                }
                throw invalid(key, value, allowed + (key.endsWith("Bytes") ? ", with an optional k, m or g for KiB,"
                    + " MiB, GiB" : ""));
            }
            return setter.apply(n);
        }

        /**
         * @param prefixes class-name prefixes of frames that are not allocation sites (e.g. {@code "com.acme.pool."})
         * @return this builder
         */
        public Builder siteFramesToSkip(final List<String> prefixes) {
            this.siteFramesToSkip = List.copyOf(prefixes);
            return this;
        }

        /**
         * @param rate one allocation in {@code rate} records its call site, in [0, 1000000000]; 0 is off
         * @return this builder
         * @throws IllegalArgumentException naming {@code siteSampleRate} when out of range
         */
        public Builder siteSampleRate(final long rate) {
            this.siteSampleRate = (int) checkRange("siteSampleRate", rate, 0, 1_000_000_000);
            return this;
        }

        /**
         * @param on true to detect explicit buffers that are collected without {@code free}
         * @return this builder
         */
        public Builder explicitLeakDetection(final boolean on) {
            this.explicitLeakDetection = on;
            return this;
        }

        /**
         * @param zero false for an allocator that never zeroes (see {@link SlabAllocatorConfig#zeroing()})
         * @return this builder
         */
        public Builder zeroing(final boolean zero) {
            this.zeroing = zero;
            return this;
        }

        /**
         * @param onFree true to zero memory when it is released instead of when it is allocated
         * @return this builder
         */
        public Builder zeroOnFree(final boolean onFree) {
            this.zeroOnFree = onFree;
            return this;
        }

        /**
         * @param bytes chunk size: a multiple of 64 KiB in [256 KiB, 1 GiB], and with its 4 KiB
         *        alignment pad at most {@code -XX:MaxDirectMemorySize} (a larger chunk could never be reserved)
         * @return this builder
         * @throws IllegalArgumentException naming {@code chunkSizeBytes} when out of range
         */
        public Builder chunkSizeBytes(final long bytes) {
            return chunkSizeBytes(bytes, DirectMemoryLimit.bytes());
        }

        /** As {@link #chunkSizeBytes(long)}, under the direct-memory limit given ({@code limitBytes < 0}: unknown). */
        Builder chunkSizeBytes(final long bytes, final long limitBytes) {
            // a chunk is reserved with its alignment pad: the largest that fits under the limit, in whole pages
            final long max = limitBytes >= 0
                ? Math.min(1 << 30, (limitBytes - Chunk.ALIGN) / PAGE_SIZE_BYTES * PAGE_SIZE_BYTES) : 1 << 30;
            if (bytes < 256 << 10 || bytes > max || bytes % PAGE_SIZE_BYTES != 0) {
                // the least a chunk can be here: one slab of the largest size class (checked again at build,
                // where a maxSizeClassBytes set later counts), and 256 KiB
                final long least = Math.max(256 << 10,
                    (long) SizeClasses.slabPages(new SizeClasses(maxSizeClassBytes).largest()) * PAGE_SIZE_BYTES);
                throw invalid("chunkSizeBytes", bytes, "a multiple of " + PAGE_SIZE_BYTES + " in [" + least + ", " + max + "]"
                    + (least > 256 << 10 ? " for maxSizeClassBytes=" + maxSizeClassBytes : "")
                    + (max < 1 << 30 ? ", at most -XX:MaxDirectMemorySize=" + limitBytes : ""));
            }
            this.chunkSizeBytes = (int) bytes;
            return this;
        }

        /**
         * @param bytes largest size class, in [64, 1 MiB]; rounded up to a size class
         * @return this builder
         * @throws IllegalArgumentException naming {@code maxSizeClassBytes} when out of range
         */
        public Builder maxSizeClassBytes(final long bytes) {
            this.maxSizeClassBytes = (int) checkRange("maxSizeClassBytes", bytes, MIN_SIZE_CLASS_BYTES, MAX_SIZE_CLASS_BYTES);
            return this;
        }

        /**
         * @param bytes smallest capacity served, in [0, 1 MiB]; 0 serves empty buffers too
         * @return this builder
         * @throws IllegalArgumentException naming {@code minCapacityBytes} when out of range
         */
        public Builder minCapacityBytes(final long bytes) {
            this.minCapacityBytes = (int) checkRange("minCapacityBytes", bytes, 0, 1 << 20);
            return this;
        }

        /**
         * @param rounds objects per magazine, in [1, 1024]
         * @return this builder
         * @throws IllegalArgumentException naming {@code magazineRounds} when out of range
         */
        public Builder magazineRounds(final long rounds) {
            this.magazineRounds = (int) checkRange("magazineRounds", rounds, 1, 1024);
            return this;
        }

        /**
         * @param magazines full magazines kept per cache depot, in [0, 65536]
         * @return this builder
         * @throws IllegalArgumentException naming {@code depotMagazines} when out of range
         */
        public Builder depotMagazines(final long magazines) {
            this.depotMagazines = (int) checkRange("depotMagazines", magazines, 0, 65536);
            return this;
        }

        /**
         * @param chunks wholly empty chunks kept for reuse, in [0, 65536]
         * @return this builder
         * @throws IllegalArgumentException naming {@code retainedEmptyChunks} when out of range
         */
        public Builder retainedEmptyChunks(final long chunks) {
            this.retainedEmptyChunks = (int) checkRange("retainedEmptyChunks", chunks, 0, 65536);
            return this;
        }

        /**
         * @param millis interval of the reaper that adopts dead threads' caches, in [10, 60000]
         * @return this builder
         * @throws IllegalArgumentException naming {@code reapIntervalMillis} when out of range
         */
        public Builder reapIntervalMillis(final long millis) {
            this.reapIntervalMillis = checkRange("reapIntervalMillis", millis, 10, 60_000);
            return this;
        }

        /**
         * @param bytes reserved bytes above which growing first asks for a collection, in [0, 1 TiB]; 0
         *              never asks ({@link SlabAllocatorConfig#collectAboveBytes()})
         * @return this builder
         * @throws IllegalArgumentException naming {@code collectAboveBytes} when out of range
         */
        public Builder collectAboveBytes(final long bytes) {
            this.collectAboveBytes = checkRange("collectAboveBytes", bytes, 0, 1L << 40);
            return this;
        }

        /**
         * @return the configuration
         * @throws IllegalArgumentException when values contradict each other (a slab of the largest
         *         class must fit in a chunk; {@code minCapacityBytes <= maxSizeClassBytes})
         */
        public SlabAllocatorConfig build() {
            return build(DirectMemoryLimit.bytes());
        }

        /** As {@link #build()}, under the direct-memory limit given ({@code limitBytes < 0}: unknown). */
        SlabAllocatorConfig build(final long limitBytes) {
            final SizeClasses classes = new SizeClasses(maxSizeClassBytes);
            maxSizeClassBytes = classes.largest(); // the effective value: rounded up to a size class
            if (minCapacityBytes > maxSizeClassBytes) {
                throw invalid("minCapacityBytes", minCapacityBytes, "[0, maxSizeClassBytes=" + maxSizeClassBytes + "]");
            }
            final long largestSlab = (long) SizeClasses.slabPages(classes.largest()) * PAGE_SIZE_BYTES;
            final int chunkBytes = chunkSizeBytes != 0 ? chunkSizeBytes : defaultChunkBytes(limitBytes, largestSlab);
            if (largestSlab > chunkBytes) {
                throw invalid("chunkSizeBytes", chunkBytes,
                    "at least one slab of the largest size class, " + largestSlab + " bytes, for maxSizeClassBytes="
                        + maxSizeClassBytes);
            }
            return new SlabAllocatorConfig(this, chunkBytes);
        }

        /**
         * 4 MiB, or a sixteenth of the limit when that is less, in whole pages: at
         * {@code MaxDirectMemorySize=8m} one 4 MiB chunk would leave kmem4j a single chunk and the
         * JDK's path every other request. Never below one slab of the largest class (nor 256 KiB).
         */
        static int defaultChunkBytes(final long limitBytes, final long largestSlabBytes) {
            long bytes = DEFAULT_CHUNK_BYTES;
            if (limitBytes >= 0) {
                bytes = Math.min(bytes, limitBytes / 16 / PAGE_SIZE_BYTES * PAGE_SIZE_BYTES);
            }
            return (int) Math.max(bytes, Math.max(largestSlabBytes, 256 << 10));
        }
    }
}
