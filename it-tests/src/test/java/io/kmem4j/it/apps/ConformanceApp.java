package io.kmem4j.it.apps;

import java.lang.reflect.Field;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.CharBuffer;
import java.nio.IntBuffer;
import java.nio.InvalidMarkException;
import java.nio.LongBuffer;
import java.nio.ReadOnlyBufferException;
import java.util.ArrayList;
import java.util.List;
import java.util.TreeSet;

/**
 * The {@code ByteBuffer.allocateDirect} contract, checked for every size around every boundary of a
 * slab allocator's size classes (64..512 in steps of 64, then four classes per doubling up to 65536:
 * {@code s-1, s, s+1} each), plus 0 and 1; it knows nothing about any agent, so it must pass on the
 * plain JDK too.
 *
 * <p>Per size, twice (the second buffer is allocated right after the first was released with
 * {@code Unsafe.invokeCleaner}, so it may reuse the block): shape of a fresh buffer (capacity,
 * position, limit, big-endian, direct, writable, no mark, all zeros); {@code slice()},
 * {@code slice(i, n)}, {@code duplicate()}, {@code asReadOnlyBuffer()}, {@code alignedSlice(8)} and the
 * typed views {@code asLongBuffer()}, {@code asIntBuffer()}, {@code asCharBuffer()} in both byte
 * orders, with writes through each view visible through the root and the other way round;
 * {@code order(LITTLE_ENDIAN)} round trips; {@code compact()}; bulk transfers between direct and heap
 * buffers; {@code mark()}/{@code reset()}; {@code invokeCleaner} on views (refused with
 * {@code IllegalArgumentException}, message printed) and on the root (accepted).
 *
 * <p>stdout is deterministic: {@code conformance: sizes=.. checks=..}, the messages the JDK gave for
 * refused {@code invokeCleaner} calls, then {@code conformance: ok checks=N}, or
 * {@code conformance: FAIL <what>} lines (at most {@value #MAX_FAIL_LINES}) and exit code 1.
 */
public final class ConformanceApp {

    private static final int MAX_FAIL_LINES = 40;
    private static final int ROUNDS = 2;

    private static final Object UNSAFE = unsafe();
    private static final java.lang.reflect.Method INVOKE_CLEANER = invokeCleanerMethod();

    private static long checks;
    private static long failures;
    private static final TreeSet<String> cleanerMessages = new TreeSet<>();

    private ConformanceApp() {
    }

    public static void main(String[] args) throws Exception {
        List<Integer> sizes = sizes();
        System.out.println("conformance: sizes=" + sizes.size() + " from=" + sizes.get(0) + " to="
                + sizes.get(sizes.size() - 1));
        for (int round = 0; round < ROUNDS; round++) {
            for (int n : sizes) {
                checkSize(n, round);
            }
        }
        checkAlignedSliceOfOddSize();
        for (String m : cleanerMessages) {
            System.out.println("conformance: invokeCleaner on a view -> " + m);
        }
        if (failures > 0) {
            System.out.println("conformance: FAIL total failures=" + failures + " checks=" + checks);
            System.out.flush();
            System.exit(1);
        }
        System.out.println("conformance: ok checks=" + checks);
    }

    /** 0, 1, and s-1, s, s+1 for every size class s (64..512 step 64, then 4 per doubling to 65536). */
    static List<Integer> sizes() {
        List<Integer> classes = new ArrayList<>();
        for (int s = 64; s <= 512; s += 64) {
            classes.add(s);
        }
        for (int base = 512; base < 65536; base <<= 1) {
            for (int k = 1; k <= 4; k++) {
                classes.add(base + k * (base >>> 2));
            }
        }
        TreeSet<Integer> all = new TreeSet<>();
        all.add(0);
        all.add(1);
        for (int s : classes) {
            all.add(s - 1);
            all.add(s);
            all.add(s + 1);
        }
        return new ArrayList<>(all);
    }

    // ------------------------------------------------------------------ one size

    private static void checkSize(int n, int round) {
        String at = "size " + n + " round " + round;
        ByteBuffer r = ByteBuffer.allocateDirect(n);
        checkFresh(r, n, at);

        // fill the root with a pattern; every view must see it
        for (int i = 0; i < n; i++) {
            r.put(i, pattern(i));
        }
        checkSlice(r, n, at);
        checkSliceRange(r, n, at);
        checkDuplicate(r, n, at);
        checkReadOnly(r, n, at);
        checkAlignedSlice(r, n, at);
        checkTypedViews(r, n, at);
        checkOrderRoundTrip(r, n, at);
        checkCompact(r, n, at);
        checkBulk(r, n, at);
        checkMarkReset(r, n, at);

        // invokeCleaner: views are refused, the root is released
        r.clear();
        refusedCleaner(r.slice(), at + " slice()");
        refusedCleaner(r.duplicate(), at + " duplicate()");
        refusedCleaner(r.asReadOnlyBuffer(), at + " asReadOnlyBuffer()");
        if (n >= 2) {
            refusedCleaner(r.slice(1, n - 1), at + " slice(1," + (n - 1) + ")");
        }
        refusedCleaner(r.alignedSlice(8), at + " alignedSlice(8)");
        // the refused calls released nothing: the root still holds its pattern after a new allocation
        ByteBuffer other = ByteBuffer.allocateDirect(n);
        for (int i = 0; i < n; i++) {
            other.put(i, (byte) 0x77);
        }
        r.position(0).limit(n).order(ByteOrder.BIG_ENDIAN);
        verifyBytes(r, 0, n, at + " root after refused invokeCleaner calls");
        invokeCleaner(other, at + " other");
        invokeCleaner(r, at + " root");
    }

    private static void checkFresh(ByteBuffer b, int n, String at) {
        check(b.capacity() == n, at, "capacity " + b.capacity());
        check(b.position() == 0, at, "position " + b.position());
        check(b.limit() == n, at, "limit " + b.limit());
        check(b.remaining() == n, at, "remaining " + b.remaining());
        check(b.order() == ByteOrder.BIG_ENDIAN, at, "order " + b.order());
        check(b.isDirect(), at, "isDirect false");
        check(!b.isReadOnly(), at, "isReadOnly true");
        check(!b.hasArray(), at, "hasArray true");
        try {
            b.reset();
            check(false, at, "fresh buffer has a mark");
        } catch (InvalidMarkException expected) {
            check(true, at, "");
        }
        int nonZero = -1;
        for (int i = 0; i < n && nonZero < 0; i++) {
            if (b.get(i) != 0) {
                nonZero = i;
            }
        }
        check(nonZero < 0, at, "not zero-filled at offset " + nonZero);
    }

    private static void checkSlice(ByteBuffer r, int n, String at) {
        String w = at + " slice()";
        r.position(Math.min(n, 3)).limit(n);
        ByteBuffer s = r.slice();
        int off = r.position();
        int len = n - off;
        check(s.capacity() == len && s.position() == 0 && s.limit() == len, w, "shape " + s);
        check(s.isDirect() && !s.isReadOnly() && s.order() == ByteOrder.BIG_ENDIAN, w, "kind " + s + " " + s.order());
        verifyBytes(s, off, len, w);
        if (len > 0) {
            int k = len / 2;
            s.put(k, (byte) 0x5A);
            check(r.get(off + k) == 0x5A, w, "write through the slice not visible in the root");
            r.put(off + k, (byte) 0xA5);
            check(s.get(k) == (byte) 0xA5, w, "write through the root not visible in the slice");
            r.put(off + k, pattern(off + k));
        }
        r.clear();
    }

    private static void checkSliceRange(ByteBuffer r, int n, String at) {
        int index = n / 3;
        int length = n - index - n / 5;
        String w = at + " slice(" + index + "," + length + ")";
        ByteBuffer s = r.slice(index, length);
        check(s.capacity() == length && s.position() == 0 && s.limit() == length, w, "shape " + s);
        check(s.isDirect() && !s.isReadOnly() && s.order() == ByteOrder.BIG_ENDIAN, w, "kind " + s);
        check(r.position() == 0 && r.limit() == n, w, "root moved " + r);
        verifyBytes(s, index, length, w);
        if (length > 0) {
            s.put(length - 1, (byte) 0x3C);
            check(r.get(index + length - 1) == 0x3C, w, "write through the slice not visible in the root");
            r.put(index, (byte) 0xC3);
            check(s.get(0) == (byte) 0xC3, w, "write through the root not visible in the slice");
            r.put(index, pattern(index));
            r.put(index + length - 1, pattern(index + length - 1));
        }
        try {
            r.slice(index, n - index + 1);
            check(false, w, "slice beyond the limit accepted");
        } catch (IndexOutOfBoundsException expected) {
            check(true, w, "");
        }
    }

    private static void checkDuplicate(ByteBuffer r, int n, String at) {
        String w = at + " duplicate()";
        int p = n / 4;
        int l = n - n / 8;
        r.limit(l).position(p);
        r.mark();
        r.order(ByteOrder.LITTLE_ENDIAN);
        ByteBuffer d = r.duplicate();
        check(d.capacity() == n && d.position() == p && d.limit() == l, w, "shape " + d);
        check(d.order() == ByteOrder.BIG_ENDIAN, w, "order " + d.order() + " (a duplicate is big-endian)");
        check(d.isDirect() && !d.isReadOnly(), w, "kind " + d);
        d.position(l);
        d.reset();
        check(d.position() == p, w, "mark not copied: reset to " + d.position());
        check(r.position() == p && r.limit() == l, w, "root moved with the duplicate " + r);
        d.clear();
        r.clear();
        verifyBytes(d, 0, n, w);
        if (n > 0) {
            d.put(n - 1, (byte) 0x11);
            check(r.get(n - 1) == 0x11, w, "write through the duplicate not visible in the root");
            r.put(0, (byte) 0x22);
            check(d.get(0) == 0x22, w, "write through the root not visible in the duplicate");
            r.put(0, pattern(0));
            r.put(n - 1, pattern(n - 1));
        }
        r.order(ByteOrder.BIG_ENDIAN);
        r.clear();
    }

    private static void checkReadOnly(ByteBuffer r, int n, String at) {
        String w = at + " asReadOnlyBuffer()";
        ByteBuffer ro = r.asReadOnlyBuffer();
        check(ro.isReadOnly() && ro.isDirect() && ro.capacity() == n && ro.limit() == n && ro.position() == 0, w,
                "shape " + ro);
        verifyBytes(ro, 0, n, w);
        try {
            ro.put(0, (byte) 1);
            check(false, w, "put accepted");
        } catch (ReadOnlyBufferException expected) {
            check(true, w, "");
        }
        try {
            ro.array();
            check(false, w, "array() accepted");
        } catch (UnsupportedOperationException expected) { // ReadOnlyBufferException or no array
            check(true, w, "");
        }
        if (n > 0) {
            r.put(n / 2, (byte) 0x44);
            check(ro.get(n / 2) == 0x44, w, "write through the root not visible in the read-only view");
            r.put(n / 2, pattern(n / 2));
        }
    }

    private static void checkAlignedSlice(ByteBuffer r, int n, String at) {
        String w = at + " alignedSlice(8)";
        r.clear();
        // the bounds ByteBuffer.alignedSlice documents, from the root's own alignment offsets
        int posMod = r.alignmentOffset(0, 8);
        int from = posMod > 0 ? 8 - posMod : 0;
        int to = n - r.alignmentOffset(n, 8);
        if (from > n || to < 0) {
            from = 0;
            to = 0;
        }
        int expected = to - from;
        ByteBuffer a = r.alignedSlice(8);
        check(a.capacity() == expected && a.position() == 0 && a.limit() == expected, w,
                "shape " + a + " expected capacity " + expected);
        check(a.isDirect() && !a.isReadOnly(), w, "kind " + a);
        if (expected > 0) {
            check(a.alignmentOffset(0, 8) == 0, w, "not 8-aligned");
            verifyBytes(a, from, expected, w);
        }
        if (expected >= 8) {
            long v = 0x0102030405060708L * (n | 1);
            long old = a.getLong(0);
            a.putLong(0, v);
            check(r.getLong(from) == v, w, "putLong through the aligned slice not visible in the root");
            a.putLong(0, old);
        }
    }

    private static void checkTypedViews(ByteBuffer r, int n, String at) {
        for (ByteOrder order : new ByteOrder[] {ByteOrder.BIG_ENDIAN, ByteOrder.LITTLE_ENDIAN}) {
            r.clear();
            r.order(order);
            String w = at + " " + order;

            LongBuffer lb = r.asLongBuffer();
            check(lb.capacity() == n / 8 && lb.isDirect() && lb.order() == order && !lb.isReadOnly(),
                    w + " asLongBuffer()", "shape " + lb + " order " + lb.order());
            for (int k = 0; k < lb.capacity(); k++) {
                if (lb.get(k) != r.getLong(8 * k)) {
                    check(false, w + " asLongBuffer()", "get(" + k + ") differs from root getLong");
                    break;
                }
            }
            if (lb.capacity() > 0) {
                int k = lb.capacity() - 1;
                long old = lb.get(k);
                lb.put(k, 0x1122334455667788L);
                check(r.getLong(8 * k) == 0x1122334455667788L, w + " asLongBuffer()",
                        "put not visible through the root");
                r.putLong(0, -0x0123456789ABCDEFL);
                check(lb.get(0) == -0x0123456789ABCDEFL, w + " asLongBuffer()", "root putLong not visible in the view");
                lb.put(k, old);
            }
            IntBuffer ib = r.asIntBuffer();
            check(ib.capacity() == n / 4 && ib.isDirect() && ib.order() == order, w + " asIntBuffer()",
                    "shape " + ib + " order " + ib.order());
            if (ib.capacity() > 0) {
                int k = ib.capacity() - 1;
                ib.put(k, 0x7A6B5C4D);
                check(r.getInt(4 * k) == 0x7A6B5C4D, w + " asIntBuffer()", "put not visible through the root");
                r.putInt(0, 0x01020304);
                check(ib.get(0) == 0x01020304, w + " asIntBuffer()", "root putInt not visible in the view");
                int raw = order == ByteOrder.BIG_ENDIAN ? 0x01 : 0x04;
                check(r.get(0) == raw, w + " asIntBuffer()", "byte 0 is " + r.get(0) + " for " + order);
            }
            CharBuffer cb = r.asCharBuffer();
            check(cb.capacity() == n / 2 && cb.isDirect() && cb.order() == order, w + " asCharBuffer()",
                    "shape " + cb + " order " + cb.order());
            if (cb.capacity() > 0) {
                int k = cb.capacity() - 1;
                cb.put(k, '\u20AC');
                check(r.getChar(2 * k) == '\u20AC', w + " asCharBuffer()", "put not visible through the root");
                r.putChar(0, 'k');
                check(cb.get(0) == 'k', w + " asCharBuffer()", "root putChar not visible in the view");
            }
        }
        r.order(ByteOrder.BIG_ENDIAN);
        r.clear();
        // restore the pattern
        for (int i = 0; i < n; i++) {
            r.put(i, pattern(i));
        }
    }

    private static void checkOrderRoundTrip(ByteBuffer r, int n, String at) {
        String w = at + " order(LITTLE_ENDIAN)";
        r.clear();
        if (n >= 8) {
            long v = 0x0807060504030201L ^ n;
            ByteBuffer le = r.order(ByteOrder.LITTLE_ENDIAN);
            check(le == r && r.order() == ByteOrder.LITTLE_ENDIAN, w, "order() did not return this");
            r.putLong(n - 8, v);
            check(r.getLong(n - 8) == v, w, "getLong after putLong");
            check(r.get(n - 8) == (byte) v, w, "lowest byte is not first");
            r.order(ByteOrder.BIG_ENDIAN);
            check(r.getLong(n - 8) == Long.reverseBytes(v), w, "big-endian read of a little-endian write");
            r.order(ByteOrder.LITTLE_ENDIAN);
            r.position(0);
            r.putLong(v).putLong(0, v);
            check(r.position() == 8, w, "relative putLong position " + r.position());
            r.position(0);
            check(r.getLong() == v && r.position() == 8, w, "relative getLong");
            r.order(ByteOrder.BIG_ENDIAN);
        }
        r.clear();
        check(r.order() == ByteOrder.BIG_ENDIAN, w, "order not restored");
    }

    private static void checkCompact(ByteBuffer r, int n, String at) {
        String w = at + " compact()";
        for (int i = 0; i < n; i++) {
            r.put(i, (byte) (i * 7 + 1));
        }
        int p = n / 3;
        int l = n - n / 4;
        r.limit(l).position(p);
        r.compact();
        check(r.position() == l - p && r.limit() == n, w, "after compact " + r);
        int bad = -1;
        for (int i = 0; i < l - p && bad < 0; i++) {
            if (r.get(i) != (byte) ((p + i) * 7 + 1)) {
                bad = i;
            }
        }
        check(bad < 0, w, "moved content differs at " + bad);
        r.clear();
    }

    private static void checkBulk(ByteBuffer r, int n, String at) {
        String w = at + " bulk";
        byte[] src = new byte[n];
        for (int i = 0; i < n; i++) {
            src[i] = (byte) (i * 13 + 5);
        }
        r.clear();
        r.put(src);
        check(r.position() == n, w, "put(byte[]) position " + r.position());
        r.flip();
        byte[] back = new byte[n];
        r.get(back);
        check(java.util.Arrays.equals(src, back), w, "get(byte[]) differs from put(byte[])");
        // direct -> heap
        r.clear();
        ByteBuffer heap = ByteBuffer.allocate(n);
        heap.put(r);
        check(heap.position() == n && r.position() == n, w, "heap.put(direct) positions");
        check(java.util.Arrays.equals(src, heap.array()), w, "heap.put(direct) content");
        // heap -> direct
        byte[] other = new byte[n];
        for (int i = 0; i < n; i++) {
            other[i] = (byte) (i * 3 + 9);
        }
        r.clear();
        r.put(ByteBuffer.wrap(other));
        check(r.position() == n, w, "direct.put(heap) position");
        r.flip();
        byte[] got = new byte[n];
        r.get(got);
        check(java.util.Arrays.equals(other, got), w, "direct.put(heap) content");
        // direct -> direct, overlapping-free: a fresh direct buffer
        ByteBuffer d2 = ByteBuffer.allocateDirect(n);
        r.clear();
        d2.put(r);
        d2.flip();
        byte[] got2 = new byte[n];
        d2.get(got2);
        check(java.util.Arrays.equals(other, got2), w, "direct.put(direct) content");
        invokeCleaner(d2, w + " second buffer");
        // bulk with offsets, absolute (JDK 16+)
        if (n >= 4) {
            r.put(1, src, 0, n - 2);
            byte[] part = new byte[n - 2];
            r.get(1, part);
            check(java.util.Arrays.equals(java.util.Arrays.copyOf(src, n - 2), part), w, "absolute bulk put/get");
        }
        r.clear();
        for (int i = 0; i < n; i++) {
            r.put(i, pattern(i));
        }
    }

    private static void checkMarkReset(ByteBuffer r, int n, String at) {
        String w = at + " mark()/reset()";
        r.clear();
        int m = Math.min(n, 3);
        r.position(m).mark();
        r.position(n);
        r.reset();
        check(r.position() == m, w, "reset to " + r.position());
        if (m > 0) {
            r.position(m - 1); // below the mark: discards it
            try {
                r.reset();
                check(false, w, "mark survived position() below it");
            } catch (InvalidMarkException expected) {
                check(true, w, "");
            }
        }
        r.position(m).mark();
        r.limit(m); // a mark not above the new limit is kept
        r.limit(n).position(n);
        r.reset();
        check(r.position() == m, w, "mark lost after limit(" + m + "): reset to " + r.position());
        r.clear();
    }

    private static void checkAlignedSliceOfOddSize() {
        // C7's shape: a view made by alignedSlice of an odd-sized buffer is refused by invokeCleaner
        ByteBuffer r = ByteBuffer.allocateDirect(1031);
        ByteBuffer s = r.alignedSlice(8);
        check(s.capacity() <= 1031 && s.capacity() >= 1031 - 14, "alignedSlice(8) of 1031", "capacity " + s.capacity());
        refusedCleaner(s, "alignedSlice(8) of 1031");
        r.put(0, (byte) 9);
        check(r.get(0) == 9, "alignedSlice(8) of 1031", "root unusable after a refused invokeCleaner");
        invokeCleaner(r, "root of 1031");
    }

    // ------------------------------------------------------------------ helpers

    /** {@code view.get(i) == pattern(rootOffset + i)} for {@code i < length} (absolute reads). */
    private static void verifyBytes(ByteBuffer view, int rootOffset, int length, String what) {
        for (int i = 0; i < length; i++) {
            byte v = view.get(i);
            if (v != pattern(rootOffset + i)) {
                check(false, what, "byte " + i + " is " + v + ", expected " + pattern(rootOffset + i));
                return;
            }
        }
        check(true, what, "");
    }

    /** The root's content between the checks. */
    private static byte pattern(int i) {
        return (byte) (i * 31 + (i >>> 8) + 1);
    }

    private static void refusedCleaner(ByteBuffer view, String what) {
        try {
            INVOKE_CLEANER.invoke(UNSAFE, view);
            check(false, what, "invokeCleaner on a view was accepted");
        } catch (java.lang.reflect.InvocationTargetException e) {
            Throwable t = e.getCause();
            if (t instanceof IllegalArgumentException) {
                check(true, what, "");
                cleanerMessages.add(t.getClass().getName() + ": " + t.getMessage());
            } else {
                check(false, what, "invokeCleaner on a view threw " + t);
            }
        } catch (IllegalAccessException e) {
            throw new IllegalStateException(e);
        }
    }

    private static void invokeCleaner(ByteBuffer root, String what) {
        try {
            INVOKE_CLEANER.invoke(UNSAFE, root);
            check(true, what, "");
        } catch (java.lang.reflect.InvocationTargetException e) {
            check(false, what, "invokeCleaner on the root threw " + e.getCause());
        } catch (IllegalAccessException e) {
            throw new IllegalStateException(e);
        }
    }

    private static void check(boolean ok, String where, String what) {
        checks++;
        if (!ok) {
            failures++;
            if (failures <= MAX_FAIL_LINES) {
                System.out.println("conformance: FAIL " + where + ": " + what);
            }
        }
    }

    private static Object unsafe() {
        try {
            Class<?> type = Class.forName("sun.misc.Unsafe");
            Field f = type.getDeclaredField("theUnsafe");
            f.setAccessible(true);
            return f.get(null);
        } catch (ReflectiveOperationException e) {
            throw new IllegalStateException(e);
        }
    }

    private static java.lang.reflect.Method invokeCleanerMethod() {
        try {
            return Class.forName("sun.misc.Unsafe").getMethod("invokeCleaner", ByteBuffer.class);
        } catch (ReflectiveOperationException e) {
            throw new IllegalStateException(e);
        }
    }
}
