package io.kmem4j.it;

import java.util.LinkedHashMap;
import java.util.Map;

/**
 * How much chunk memory ({@code BytesReserved}) kmem4j may hold for a live set, derived from its
 * configuration (the allocator bean's {@code Configuration} attribute) and the size classes in use
 * (their {@code SlabCache} beans):
 *
 * <pre>
 *   caches(c)  = T(c) * (2 * magazineRounds * objectSize + slabBytes)       per thread that used class c:
 *                                                                          a loaded and a previous magazine
 *                                                                          and its frozen slab
 *              + depotMagazines * magazineRounds * objectSize + slabBytes   the cache: a full depot and a
 *                                                                          slab (its other empty slabs
 *                                                                          go back to the pages before
 *                                                                          the heap grows)
 *   bound      = ceil((liveObjectBytes + sum over c of caches(c)) / chunkSizeBytes)
 *                + retainedEmptyChunks                                     whole chunks, plus the empty
 *                                                                          ones kept on purpose
 *                times chunkSizeBytes + 4 KiB                              as the JDK's pool counts a chunk
 * </pre>
 *
 * {@code liveObjectBytes} is the sum over the caches of {@code ActiveObjects * ObjectSize}: live
 * buffers rounded up to their size class. The bound assumes objects held by caches fill slabs as
 * densely as live ones (the allocator refills magazines from the lowest addresses, address
 * order); it is what "live set plus the configured caches" means in field
 * cases C3 and C5.
 */
public final class CacheBound {

    /** The JDK's pool counts each chunk with a 4 KiB alignment pad (see README, one account of direct memory). */
    static final long CHUNK_PAD = 4096;

    private final Map<String, String> config;
    private final Map<String, long[]> classes = new LinkedHashMap<>();

    /** @param configuration the allocator bean's {@code Configuration}: {@code key=value,key=value,...} */
    public CacheBound(String configuration) {
        Map<String, String> m = new LinkedHashMap<>();
        for (String kv : configuration.split(",")) {
            int eq = kv.indexOf('=');
            if (eq > 0) {
                m.put(kv.substring(0, eq).trim(), kv.substring(eq + 1).trim());
            }
        }
        this.config = m;
    }

    /**
     * Adds a size class in use.
     *
     * @param objectSize   the cache's {@code ObjectSize}, bytes
     * @param pagesPerSlab the cache's {@code PagesPerSlab} (64 KiB pages)
     * @param threads      how many threads may hold magazines and a frozen slab of it at once
     */
    public CacheBound sizeClass(long objectSize, long pagesPerSlab, long threads) {
        classes.put("kmem4j-" + objectSize, new long[] {objectSize, pagesPerSlab * 64 * 1024, threads});
        return this;
    }

    public long chunkSizeBytes() {
        return setting("chunkSizeBytes");
    }

    /** Bytes one chunk counts for in {@code BytesReserved}. */
    public long chunkReservation() {
        return chunkSizeBytes() + CHUNK_PAD;
    }

    /** The configured caches of every class added, bytes. */
    public long cachesBytes() {
        long rounds = setting("magazineRounds");
        long depot = setting("depotMagazines");
        long sum = 0;
        for (long[] c : classes.values()) {
            long objectSize = c[0];
            long slabBytes = c[1];
            long threads = c[2];
            sum += threads * (2 * rounds * objectSize + slabBytes) + depot * rounds * objectSize + slabBytes;
        }
        return sum;
    }

    /** The most {@code BytesReserved} may be with {@code liveObjectBytes} live. */
    public long bound(long liveObjectBytes) {
        long chunk = chunkSizeBytes();
        long chunks = (liveObjectBytes + cachesBytes() + chunk - 1) / chunk + setting("retainedEmptyChunks");
        return chunks * chunkReservation();
    }

    /** The formula with its figures, for assertion messages and the report. */
    public String explain(long liveObjectBytes) {
        return "bound(" + liveObjectBytes + ") = ceil((" + liveObjectBytes + " + caches " + cachesBytes() + ") / "
                + chunkSizeBytes() + ") + retainedEmptyChunks " + setting("retainedEmptyChunks") + ", times "
                + chunkReservation() + " = " + bound(liveObjectBytes) + " (classes objectSize/slabBytes/threads: "
                + classesText() + ", magazineRounds=" + setting("magazineRounds") + ", depotMagazines="
                + setting("depotMagazines") + ")";
    }

    private String classesText() {
        StringBuilder sb = new StringBuilder();
        classes.forEach((name, c) -> sb.append(sb.length() == 0 ? "" : " ").append(c[0]).append('/').append(c[1])
                .append('/').append(c[2]));
        return sb.toString();
    }

    /** A numeric setting of the configuration; fails naming the key when it is missing. */
    public long setting(String key) {
        String v = config.get(key);
        if (v == null) {
            throw new AssertionError("no " + key + " in the allocator's Configuration " + config);
        }
        return Long.parseLong(v);
    }
}
