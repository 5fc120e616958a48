package io.kmem4j.it.apps;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.IntBuffer;
import java.nio.LongBuffer;
import java.util.ArrayList;
import java.util.List;

/**
 * A live view keeps its memory (field case C8). For each kind of view (duplicate, slice, slice(i, n),
 * read-only, alignedSlice(8), long view, int view): {@code r = allocateDirect(4096)} filled with 0xAB,
 * {@code v = view of r}, {@code r} dropped. Also {@value #CONTROLS} buffers dropped with no view (they
 * may be collected). Then {@value #ROUNDS} times: {@code System.gc()}, allocate {@value #PER_ROUND}
 * buffers of 4096 bytes filled with 0xFF (kept live), and check every byte of every view is still 0xAB.
 * Prints {@code c8: ok ..} or {@code c8: FAIL ..} (exit 1), and the allocator bean's free counters if
 * registered.
 */
public final class LiveViewApp {

    static final int ROUNDS = 20;
    static final int PER_ROUND = 32;
    static final int CONTROLS = 16;
    private static final int SIZE = 4096;
    private static final String[] KINDS = {
        "duplicate", "slice", "slice(64,3968)", "asReadOnlyBuffer", "alignedSlice(8)", "asLongBuffer", "asIntBuffer",
    };

    private LiveViewApp() {
    }

    public static void main(String[] args) throws Exception {
        BeanReads.awaitAllocator(5000);
        Object[] views = new Object[KINDS.length];
        for (int k = 0; k < KINDS.length; k++) {
            views[k] = makeView(k);
        }
        makeControls();
        List<ByteBuffer> fresh = new ArrayList<>();
        int failures = 0;
        for (int round = 0; round < ROUNDS; round++) {
            System.gc();
            for (int j = 0; j < PER_ROUND; j++) {
                ByteBuffer b = ByteBuffer.allocateDirect(SIZE);
                for (int i = 0; i < SIZE; i++) {
                    b.put(i, (byte) 0xFF);
                }
                fresh.add(b);
            }
            for (int k = 0; k < KINDS.length; k++) {
                String bad = verify(views[k]);
                if (bad != null) {
                    failures++;
                    System.out.println("c8: FAIL round " + round + " view " + KINDS[k] + ": " + bad);
                }
            }
        }
        System.out.println("c8: counters " + BeanReads.format(BeanReads.freshAllocator("Allocations", "Frees",
                "GcFrees", "ExplicitFrees", "LiveBuffers")));
        if (failures > 0) {
            System.exit(1);
        }
        System.out.println("c8: ok views=" + KINDS.length + " rounds=" + ROUNDS + " fresh=" + fresh.size());
    }

    /** The root is a local of this frame only: after the return only the view refers to it. */
    private static Object makeView(int kind) {
        ByteBuffer r = ByteBuffer.allocateDirect(SIZE);
        for (int i = 0; i < SIZE; i++) {
            r.put(i, (byte) 0xAB);
        }
        switch (kind) {
            case 0: return r.duplicate();
            case 1: return r.slice();
            case 2: return r.slice(64, SIZE - 128);
            case 3: return r.asReadOnlyBuffer();
            case 4: return r.alignedSlice(8);
            case 5: return r.asLongBuffer();
            case 6: return r.order(ByteOrder.LITTLE_ENDIAN).asIntBuffer();
            default: throw new IllegalArgumentException("kind " + kind);
        }
    }

    private static void makeControls() {
        for (int i = 0; i < CONTROLS; i++) {
            ByteBuffer.allocateDirect(SIZE).put(0, (byte) 1);
        }
    }

    /** @return null when every element of the view is 0xAB..., else what differs */
    private static String verify(Object view) {
        if (view instanceof ByteBuffer) {
            ByteBuffer v = (ByteBuffer) view;
            if (v.capacity() < SIZE - 128) {
                return "capacity " + v.capacity();
            }
            for (int i = 0; i < v.capacity(); i++) {
                if (v.get(i) != (byte) 0xAB) {
                    return "byte " + i + " is 0x" + Integer.toHexString(v.get(i) & 0xff);
                }
            }
        } else if (view instanceof LongBuffer) {
            LongBuffer v = (LongBuffer) view;
            for (int i = 0; i < v.capacity(); i++) {
                if (v.get(i) != 0xABABABABABABABABL) {
                    return "long " + i + " is 0x" + Long.toHexString(v.get(i));
                }
            }
        } else {
            IntBuffer v = (IntBuffer) view;
            for (int i = 0; i < v.capacity(); i++) {
                if (v.get(i) != 0xABABABAB) {
                    return "int " + i + " is 0x" + Integer.toHexString(v.get(i));
                }
            }
        }
        return null;
    }
}
