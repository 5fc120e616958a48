package io.kmem4j.samples.support;

import java.util.SplittableRandom;

/**
 * The resources served by the HTTP samples: {@code /content/<size>/<id>} is {@code size} bytes of
 * the {@link Payload} sequence named by {@link #seed(int, int) seed(size, id)}, so the body is a
 * function of the path alone and a client can verify every byte it receives.
 *
 * <p>Stateless; safe to use from any thread.
 */
public final class GeneratedContent {

    /** The body sizes clients ask for, picked uniformly: a few small, a few larger than 64 KiB. */
    private static final int[] SIZES = {128, 1000, 4096, 16384, 65536, 200_000};

    /** Largest body a server generates; larger requests get 404. */
    public static final int MAX_SIZE = 1 << 20;

    /** Number of distinct ids per size a client picks from. */
    private static final int IDS = 1000;

    private static final String PREFIX = "/content/";

    private GeneratedContent() {}

    /** A resource a client asks for. */
    public record Resource(int size, int id) {
        public String path() {
            return PREFIX + size + "/" + id;
        }

        public long seed() {
            return GeneratedContent.seed(size, id);
        }
    }

    /** Picks the next resource to request. */
    public static Resource pick(SplittableRandom random) {
        return new Resource(SIZES[random.nextInt(SIZES.length)], random.nextInt(IDS));
    }

    /** The seed of the body of {@code /content/<size>/<id>}. */
    public static long seed(int size, int id) {
        return Payload.seed(size, id);
    }

    /**
     * Parses a request path.
     *
     * @return the resource, or {@code null} if the path is not {@code /content/<size>/<id>} with
     *     {@code 0 <= size <= MAX_SIZE} and {@code id >= 0}
     */
    public static Resource parse(String path) {
        if (path == null || !path.startsWith(PREFIX)) {
            return null;
        }
        int slash = path.indexOf('/', PREFIX.length());
        if (slash < 0) {
            return null;
        }
        try {
            int size = Integer.parseInt(path.substring(PREFIX.length(), slash));
            int id = Integer.parseInt(path.substring(slash + 1));
            return size < 0 || size > MAX_SIZE || id < 0 ? null : new Resource(size, id);
        } catch (NumberFormatException e) {
            return null;
        }
    }
}
