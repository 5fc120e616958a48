package io.kmem4j.agent.netty;

import java.lang.reflect.Method;

import net.bytebuddy.jar.asm.ClassWriter;
import net.bytebuddy.jar.asm.FieldVisitor;
import net.bytebuddy.jar.asm.Label;
import net.bytebuddy.jar.asm.MethodVisitor;
import net.bytebuddy.jar.asm.Opcodes;
import net.bytebuddy.jar.asm.Type;

/**
 * The class files kmem4j defines into a copy of Netty's buffer package ({@link NettyCopy}), written
 * with the ASM inside ByteBuddy (ByteBuddy's own subclass machinery cost some 0.15 s at the first
 * Netty buffer). Each hook reads a static field of its class, set right after the class is defined,
 * and runs Netty's own code when the field or its answer is {@code null}:
 * <pre>
 *   public final class Kmem4jDirectByteBuf extends UnpooledUnsafeDirectByteBuf   // or UnpooledDirectByteBuf
 *       public static volatile IntFunction kmem4jGrow, kmem4jGrowCleanable;  public static volatile Predicate kmem4jRelease;
 *       public Kmem4jDirectByteBuf(ByteBufAllocator a, ByteBuffer block, int max) { super(a, block, max, true[, false]); setIndex(0, 0); }
 *       protected ByteBuffer allocateDirect(int c) {                  // growth, 4.1
 *           IntFunction f = kmem4jGrow; Object b; if (f != null &amp;&amp; (b = f.apply(c)) != null) return (ByteBuffer) b;
 *           return super.allocateDirect(c); }
 *       protected CleanableDirectBuffer allocateDirectBuffer(int c) { the same with kmem4jGrowCleanable }   // growth, 4.2
 *       protected void freeDirect(ByteBuffer b) {                     // deallocate(), and the old buffer of a growth
 *           Predicate p = kmem4jRelease; if (p != null &amp;&amp; p.test(b)) return; super.freeDirect(b); }
 *   // with reuse ({@link ReleasedBuffers}; when the copy has the members it needs):
 *       implements LongFunction, Supplier;  public static volatile BiPredicate kmem4jRecycle;  private ByteBuffer kmem4jBlock;
 *       (the constructor also sets kmem4jBlock = block)
 *       protected void deallocate() {                                  // reference count 0
 *           BiPredicate p = kmem4jRecycle; if (p != null &amp;&amp; buffer == kmem4jBlock &amp;&amp; p.test(this, alloc())) return;
 *           super.deallocate(); }
 *       public Object get() { return kmem4jBlock; }
 *       public Object apply(long capacities) {                         // a kept buffer served again: max &lt;&lt; 32 | capacity
 *           if (capacity() != (int) capacities) { kmem4jBlock.clear().limit((int) capacities); setByteBuffer(kmem4jBlock, false); }
 *           maxCapacity((int) (capacities &gt;&gt;&gt; 32));
 *           resetRefCnt(); setIndex0(0, 0); discardMarks(); return AbstractByteBufAllocator.toLeakAwareBuffer(this); }
 *       public int maxFastWritableBytes(), public ByteBuf capacity(int c)   // growth within the block: {@link #inBlockGrowth}
 *       public ByteBuf retainedSlice(int i, int n) { return PooledSlicedByteBuf.newInstance(this, this, i, n); }   // as PooledByteBuf
 *       public ByteBuf retainedSlice() { return retainedSlice(readerIndex(), readableBytes()); }
 *       public ByteBuf retainedDuplicate() { return PooledDuplicatedByteBuf.newInstance(this, this, readerIndex(), writerIndex()); }
 *   public final class Kmem4jCleanableBuffer implements CleanableDirectBuffer      // 4.2: a block served on growth
 *       public static volatile Predicate kmem4jRelease;  private final ByteBuffer kmem4jBuffer;
 *       public ByteBuffer buffer() { return kmem4jBuffer; }
 *       public void clean() { Predicate p = kmem4jRelease; if (p != null) p.test(kmem4jBuffer); }
 *   public final class Kmem4jByteBufFactory implements BiFunction
 *       public Object apply(Object a, Object block) {
 *           return AbstractByteBufAllocator.toLeakAwareBuffer(new Kmem4jDirectByteBuf((ByteBufAllocator) a, (ByteBuffer) block, Integer.MAX_VALUE)); }
 * </pre>
 * They reference only {@code java.base} and Netty's own types. Stateless; any thread.
 */
final class NettyClasses {
    static final String BYTE_BUF = "Kmem4jDirectByteBuf";
    static final String CLEANABLE = "Kmem4jCleanableBuffer";
    static final String FACTORY = "Kmem4jByteBufFactory";
    private static final String BYTE_BUFFER = "java/nio/ByteBuffer";
    private static final String INT_FUNCTION = "java/util/function/IntFunction";
    private static final String LONG_FUNCTION = "java/util/function/LongFunction";
    private static final String PREDICATE = "java/util/function/Predicate";
    private static final String BI_PREDICATE = "java/util/function/BiPredicate";
    private static final String SUPPLIER = "java/util/function/Supplier";
    private static final String OBJECT = "java/lang/Object";
    private static final int PSV = Opcodes.ACC_PUBLIC | Opcodes.ACC_STATIC | Opcodes.ACC_VOLATILE;

    private NettyClasses() {
    }

    /**
     * @param pkg        the copy's buffer package, internal form with the trailing slash ({@code io/netty/buffer/})
     * @param base       Netty's {@code UnpooledUnsafeDirectByteBuf} or {@code UnpooledDirectByteBuf}
     * @param unsafe     which of the two: its constructor takes {@code (alloc, buffer, max, doFree)}, the
     *                   other's {@code (alloc, buffer, max, doFree, slice)}
     * @param allocator  Netty's {@code ByteBufAllocator}
     * @param cleanable  Netty 4.2's {@code CleanableDirectBuffer}, or {@code null} (4.1)
     * @param leakAware  {@code AbstractByteBufAllocator.toLeakAwareBuffer(ByteBuf)}, for the reuse methods;
     *                   {@code null}: no reuse (the copy lacks a member they need)
     */
    static byte[] byteBuf(final String pkg, final Class<?> base, final boolean unsafe, final Class<?> allocator,
                          final Class<?> cleanable, final Method leakAware) {
        final String self = pkg + BYTE_BUF;
        final String sup = Type.getInternalName(base);
        final ClassWriter cw = new ClassWriter(ClassWriter.COMPUTE_MAXS);
        final boolean reuse = leakAware != null;
        cw.visit(Opcodes.V11, Opcodes.ACC_PUBLIC | Opcodes.ACC_FINAL | Opcodes.ACC_SUPER, self, null, sup,
            reuse ? new String[] {LONG_FUNCTION, SUPPLIER} : null);
        field(cw, NettyCopy.GROW_FIELD, INT_FUNCTION);
        field(cw, NettyCopy.RELEASE_FIELD, PREDICATE);
        final String allocatorDesc = Type.getDescriptor(allocator);

        final MethodVisitor init = cw.visitMethod(Opcodes.ACC_PUBLIC, "<init>",
            "(" + allocatorDesc + "L" + BYTE_BUFFER + ";I)V", null, null);
        init.visitCode();
        init.visitVarInsn(Opcodes.ALOAD, 0);
        init.visitVarInsn(Opcodes.ALOAD, 1);
        init.visitVarInsn(Opcodes.ALOAD, 2);
        init.visitVarInsn(Opcodes.ILOAD, 3);
        init.visitInsn(Opcodes.ICONST_1); // doFree: deallocate() frees it, through freeDirect
        if (!unsafe) {
            init.visitInsn(Opcodes.ICONST_0); // slice: no
        }
        init.visitMethodInsn(Opcodes.INVOKESPECIAL, sup, "<init>",
            "(" + allocatorDesc + "L" + BYTE_BUFFER + ";IZ" + (unsafe ? "" : "Z") + ")V", false);
        init.visitVarInsn(Opcodes.ALOAD, 0);
        init.visitInsn(Opcodes.ICONST_0);
        init.visitInsn(Opcodes.ICONST_0);
        init.visitMethodInsn(Opcodes.INVOKEVIRTUAL, self, "setIndex", "(II)L" + pkg + "ByteBuf;", false);
        init.visitInsn(Opcodes.POP);
        if (reuse) {
            init.visitVarInsn(Opcodes.ALOAD, 0);
            init.visitVarInsn(Opcodes.ALOAD, 2);
            init.visitFieldInsn(Opcodes.PUTFIELD, self, NettyCopy.BLOCK_FIELD, "L" + BYTE_BUFFER + ";");
        }
        init.visitInsn(Opcodes.RETURN);
        init.visitMaxs(0, 0);
        init.visitEnd();
        if (reuse) {
            reuse(cw, self, sup, pkg, leakAware);
        }

        grow(cw, self, sup, "allocateDirect", NettyCopy.GROW_FIELD, BYTE_BUFFER);
        if (cleanable != null) {
            field(cw, NettyCopy.GROW_CLEANABLE_FIELD, INT_FUNCTION);
            grow(cw, self, sup, "allocateDirectBuffer", NettyCopy.GROW_CLEANABLE_FIELD, Type.getInternalName(cleanable));
        }

        final MethodVisitor free = cw.visitMethod(Opcodes.ACC_PROTECTED, "freeDirect", "(L" + BYTE_BUFFER + ";)V",
            null, null);
        free.visitCode();
        final Label none = new Label();
        final Label own = new Label();
        free.visitFieldInsn(Opcodes.GETSTATIC, self, NettyCopy.RELEASE_FIELD, "L" + PREDICATE + ";");
        free.visitInsn(Opcodes.DUP);
        free.visitJumpInsn(Opcodes.IFNULL, none);
        free.visitVarInsn(Opcodes.ALOAD, 1);
        free.visitMethodInsn(Opcodes.INVOKEINTERFACE, PREDICATE, "test", "(L" + OBJECT + ";)Z", true);
        free.visitJumpInsn(Opcodes.IFEQ, own);
        free.visitInsn(Opcodes.RETURN);
        final Object[] locals = {self, BYTE_BUFFER};
        free.visitLabel(none);
        free.visitFrame(Opcodes.F_NEW, 2, locals, 1, new Object[] {OBJECT});
        free.visitInsn(Opcodes.POP);
        free.visitLabel(own); // not kmem4j's block: Netty's own free
        free.visitFrame(Opcodes.F_NEW, 2, locals, 0, new Object[0]);
        free.visitVarInsn(Opcodes.ALOAD, 0);
        free.visitVarInsn(Opcodes.ALOAD, 1);
        free.visitMethodInsn(Opcodes.INVOKESPECIAL, sup, "freeDirect", "(L" + BYTE_BUFFER + ";)V", false);
        free.visitInsn(Opcodes.RETURN);
        free.visitMaxs(0, 0);
        free.visitEnd();
        cw.visitEnd();
        return cw.toByteArray();
    }

    /** The reuse members of {@code Kmem4jDirectByteBuf} (see the class comment). */
    private static void reuse(final ClassWriter cw, final String self, final String sup, final String pkg,
                              final Method leakAware) {
        final String block = "L" + BYTE_BUFFER + ";";
        field(cw, NettyCopy.RECYCLE_FIELD, BI_PREDICATE);
        cw.visitField(Opcodes.ACC_PRIVATE, NettyCopy.BLOCK_FIELD, block, null, null).visitEnd();

        final MethodVisitor dealloc = cw.visitMethod(Opcodes.ACC_PROTECTED, "deallocate", "()V", null, null);
        dealloc.visitCode();
        final Label none = new Label();
        final Label own = new Label();
        dealloc.visitFieldInsn(Opcodes.GETSTATIC, self, NettyCopy.RECYCLE_FIELD, "L" + BI_PREDICATE + ";");
        dealloc.visitInsn(Opcodes.DUP);
        dealloc.visitJumpInsn(Opcodes.IFNULL, none);
        dealloc.visitVarInsn(Opcodes.ALOAD, 0);
        dealloc.visitFieldInsn(Opcodes.GETFIELD, self, "buffer", block); // Netty's field (same package)
        dealloc.visitVarInsn(Opcodes.ALOAD, 0);
        dealloc.visitFieldInsn(Opcodes.GETFIELD, self, NettyCopy.BLOCK_FIELD, block);
        dealloc.visitJumpInsn(Opcodes.IF_ACMPNE, none); // grown: another block, Netty's deallocate frees it
        dealloc.visitVarInsn(Opcodes.ALOAD, 0);
        dealloc.visitVarInsn(Opcodes.ALOAD, 0);
        dealloc.visitMethodInsn(Opcodes.INVOKEVIRTUAL, self, "alloc", "()L" + pkg + "ByteBufAllocator;", false);
        dealloc.visitMethodInsn(Opcodes.INVOKEINTERFACE, BI_PREDICATE, "test", "(L" + OBJECT + ";L" + OBJECT + ";)Z",
            true);
        dealloc.visitJumpInsn(Opcodes.IFEQ, own);
        dealloc.visitInsn(Opcodes.RETURN);
        dealloc.visitLabel(none);
        dealloc.visitFrame(Opcodes.F_NEW, 1, new Object[] {self}, 1, new Object[] {OBJECT});
        dealloc.visitInsn(Opcodes.POP);
        dealloc.visitLabel(own);
        dealloc.visitFrame(Opcodes.F_NEW, 1, new Object[] {self}, 0, new Object[0]);
        dealloc.visitVarInsn(Opcodes.ALOAD, 0);
        dealloc.visitMethodInsn(Opcodes.INVOKESPECIAL, sup, "deallocate", "()V", false);
        dealloc.visitInsn(Opcodes.RETURN);
        dealloc.visitMaxs(0, 0);
        dealloc.visitEnd();

        getter(cw, self, "get", "L" + OBJECT + ";", NettyCopy.BLOCK_FIELD);

        // apply(long capacities): capacities = maxCapacity << 32 | capacity (locals: this, capacities (2 slots), block)
        final MethodVisitor apply = cw.visitMethod(Opcodes.ACC_PUBLIC, "apply", "(J)L" + OBJECT + ";", null, null);
        apply.visitCode();
        apply.visitVarInsn(Opcodes.ALOAD, 0);
        apply.visitFieldInsn(Opcodes.GETFIELD, self, NettyCopy.BLOCK_FIELD, block);
        apply.visitVarInsn(Opcodes.ASTORE, 3);
        // the capacity of the last use again: setByteBuffer would change nothing but drop Netty's cached
        // duplicate of the block (tmpNioBuf), which every socket read and write would then make anew
        final Label sameCapacity = new Label();
        apply.visitVarInsn(Opcodes.ALOAD, 0);
        apply.visitMethodInsn(Opcodes.INVOKEVIRTUAL, self, "capacity", "()I", false);
        apply.visitVarInsn(Opcodes.LLOAD, 1);
        apply.visitInsn(Opcodes.L2I);
        apply.visitJumpInsn(Opcodes.IF_ICMPEQ, sameCapacity);
        apply.visitVarInsn(Opcodes.ALOAD, 3);
        apply.visitMethodInsn(Opcodes.INVOKEVIRTUAL, BYTE_BUFFER, "clear", "()" + block, false);
        apply.visitVarInsn(Opcodes.LLOAD, 1);
        apply.visitInsn(Opcodes.L2I);
        apply.visitMethodInsn(Opcodes.INVOKEVIRTUAL, BYTE_BUFFER, "limit", "(I)" + block, false);
        apply.visitInsn(Opcodes.POP);
        apply.visitVarInsn(Opcodes.ALOAD, 0);
        apply.visitVarInsn(Opcodes.ALOAD, 3);
        apply.visitInsn(Opcodes.ICONST_0); // tryFree: no (it is the same block)
        apply.visitMethodInsn(Opcodes.INVOKEVIRTUAL, self, "setByteBuffer", "(" + block + "Z)V", false);
        apply.visitLabel(sameCapacity);
        apply.visitFrame(Opcodes.F_NEW, 3, new Object[] {self, Opcodes.LONG, BYTE_BUFFER}, 0, new Object[0]);
        apply.visitVarInsn(Opcodes.ALOAD, 0);
        apply.visitVarInsn(Opcodes.LLOAD, 1);
        apply.visitIntInsn(Opcodes.BIPUSH, 32);
        apply.visitInsn(Opcodes.LUSHR);
        apply.visitInsn(Opcodes.L2I);
        apply.visitMethodInsn(Opcodes.INVOKEVIRTUAL, self, "maxCapacity", "(I)V", false);
        apply.visitVarInsn(Opcodes.ALOAD, 0);
        apply.visitMethodInsn(Opcodes.INVOKEVIRTUAL, self, "resetRefCnt", "()V", false);
        apply.visitVarInsn(Opcodes.ALOAD, 0);
        apply.visitInsn(Opcodes.ICONST_0);
        apply.visitInsn(Opcodes.ICONST_0);
        apply.visitMethodInsn(Opcodes.INVOKEVIRTUAL, self, "setIndex0", "(II)V", false);
        apply.visitVarInsn(Opcodes.ALOAD, 0);
        apply.visitMethodInsn(Opcodes.INVOKEVIRTUAL, self, "discardMarks", "()V", false);
        apply.visitVarInsn(Opcodes.ALOAD, 0);
        apply.visitMethodInsn(Opcodes.INVOKESTATIC, Type.getInternalName(leakAware.getDeclaringClass()),
            leakAware.getName(), Type.getMethodDescriptor(leakAware), false);
        apply.visitInsn(Opcodes.ARETURN);
        apply.visitMaxs(0, 0);
        apply.visitEnd();

        inBlockGrowth(cw, self, sup, pkg, block);

        // retained views with a reference count of their own, as PooledByteBuf's: a view released twice
        // throws instead of releasing this buffer, which reuse would then hand to someone else
        final String byteBuf = "L" + pkg + "ByteBuf;";
        final String factory = "(L" + pkg + "AbstractByteBuf;" + byteBuf + "II)";
        derived(cw, "retainedSlice", "(II)" + byteBuf, pkg + "PooledSlicedByteBuf", factory, mv -> {
            mv.visitVarInsn(Opcodes.ILOAD, 1);
            mv.visitVarInsn(Opcodes.ILOAD, 2);
        });
        final MethodVisitor whole = cw.visitMethod(Opcodes.ACC_PUBLIC, "retainedSlice", "()" + byteBuf, null, null);
        whole.visitCode();
        whole.visitVarInsn(Opcodes.ALOAD, 0);
        whole.visitVarInsn(Opcodes.ALOAD, 0);
        whole.visitMethodInsn(Opcodes.INVOKEVIRTUAL, self, "readerIndex", "()I", false);
        whole.visitVarInsn(Opcodes.ALOAD, 0);
        whole.visitMethodInsn(Opcodes.INVOKEVIRTUAL, self, "readableBytes", "()I", false);
        whole.visitMethodInsn(Opcodes.INVOKEVIRTUAL, self, "retainedSlice", "(II)" + byteBuf, false);
        whole.visitInsn(Opcodes.ARETURN);
        whole.visitMaxs(0, 0);
        whole.visitEnd();

        derived(cw, "retainedDuplicate", "()" + byteBuf, pkg + "PooledDuplicatedByteBuf", factory, mv -> {
            mv.visitVarInsn(Opcodes.ALOAD, 0);
            mv.visitMethodInsn(Opcodes.INVOKEVIRTUAL, self, "readerIndex", "()I", false);
            mv.visitVarInsn(Opcodes.ALOAD, 0);
            mv.visitMethodInsn(Opcodes.INVOKEVIRTUAL, self, "writerIndex", "()I", false);
        });
    }

    /**
     * Growth within the block (a block spans its whole size class), as a {@code PooledByteBuf} grows
     * within its run up to {@code maxLength}: Netty's {@code ensureWritable} asks
     * {@code maxFastWritableBytes()} first and then {@code capacity(n)}, which moves the limit instead of
     * copying to a new block; a shrink trims the indices and moves the limit too, so the buffer keeps
     * its block and stays reusable.
     * <pre>
     *   public int maxFastWritableBytes() { ByteBuffer b = kmem4jBlock;
     *       return buffer == b ? Math.min(b.capacity(), maxCapacity()) - writerIndex() : writableBytes(); }
     *   public ByteBuf capacity(int c) { ByteBuffer b = kmem4jBlock;
     *       if (buffer == b &amp;&amp; c &lt;= b.capacity()) {      // grown or shrunk within the block, as PooledByteBuf
     *           checkNewCapacity(c); trimIndicesToCapacity(c); b.clear().limit(c); setByteBuffer(b, false); return this; }
     *       return super.capacity(c); }
     * </pre>
     */
    private static void inBlockGrowth(final ClassWriter cw, final String self, final String sup, final String pkg,
                                      final String block) {
        final MethodVisitor fast = cw.visitMethod(Opcodes.ACC_PUBLIC, "maxFastWritableBytes", "()I", null, null);
        fast.visitCode();
        final Label other = new Label();
        blockInUse(fast, self, block, 1, other);
        fast.visitVarInsn(Opcodes.ALOAD, 1);
        fast.visitMethodInsn(Opcodes.INVOKEVIRTUAL, BYTE_BUFFER, "capacity", "()I", false);
        fast.visitVarInsn(Opcodes.ALOAD, 0);
        fast.visitMethodInsn(Opcodes.INVOKEVIRTUAL, self, "maxCapacity", "()I", false);
        fast.visitMethodInsn(Opcodes.INVOKESTATIC, "java/lang/Math", "min", "(II)I", false);
        fast.visitVarInsn(Opcodes.ALOAD, 0);
        fast.visitMethodInsn(Opcodes.INVOKEVIRTUAL, self, "writerIndex", "()I", false);
        fast.visitInsn(Opcodes.ISUB);
        fast.visitInsn(Opcodes.IRETURN);
        fast.visitLabel(other); // grown into another block: Netty's own answer
        fast.visitFrame(Opcodes.F_NEW, 2, new Object[] {self, BYTE_BUFFER}, 0, new Object[0]);
        fast.visitVarInsn(Opcodes.ALOAD, 0);
        fast.visitMethodInsn(Opcodes.INVOKEVIRTUAL, self, "writableBytes", "()I", false);
        fast.visitInsn(Opcodes.IRETURN);
        fast.visitMaxs(0, 0);
        fast.visitEnd();

        final String byteBuf = "L" + pkg + "ByteBuf;";
        final MethodVisitor cap = cw.visitMethod(Opcodes.ACC_PUBLIC, "capacity", "(I)" + byteBuf, null, null);
        cap.visitCode();
        final Label netty = new Label();
        blockInUse(cap, self, block, 2, netty);
        cap.visitVarInsn(Opcodes.ILOAD, 1);
        cap.visitVarInsn(Opcodes.ALOAD, 2);
        cap.visitMethodInsn(Opcodes.INVOKEVIRTUAL, BYTE_BUFFER, "capacity", "()I", false);
        cap.visitJumpInsn(Opcodes.IF_ICMPGT, netty); // beyond the block: Netty's own, a new block
        cap.visitVarInsn(Opcodes.ALOAD, 0);
        cap.visitVarInsn(Opcodes.ILOAD, 1);
        cap.visitMethodInsn(Opcodes.INVOKEVIRTUAL, self, "checkNewCapacity", "(I)V", false);
        cap.visitVarInsn(Opcodes.ALOAD, 0);
        cap.visitVarInsn(Opcodes.ILOAD, 1);
        cap.visitMethodInsn(Opcodes.INVOKEVIRTUAL, self, "trimIndicesToCapacity", "(I)V", false); // a shrink
        cap.visitVarInsn(Opcodes.ALOAD, 2);
        cap.visitMethodInsn(Opcodes.INVOKEVIRTUAL, BYTE_BUFFER, "clear", "()" + block, false);
        cap.visitVarInsn(Opcodes.ILOAD, 1);
        cap.visitMethodInsn(Opcodes.INVOKEVIRTUAL, BYTE_BUFFER, "limit", "(I)" + block, false);
        cap.visitInsn(Opcodes.POP);
        cap.visitVarInsn(Opcodes.ALOAD, 0);
        cap.visitVarInsn(Opcodes.ALOAD, 2);
        cap.visitInsn(Opcodes.ICONST_0); // tryFree: no (the same block)
        cap.visitMethodInsn(Opcodes.INVOKEVIRTUAL, self, "setByteBuffer", "(" + block + "Z)V", false);
        cap.visitVarInsn(Opcodes.ALOAD, 0);
        cap.visitInsn(Opcodes.ARETURN);
        cap.visitLabel(netty);
        cap.visitFrame(Opcodes.F_NEW, 3, new Object[] {self, Opcodes.INTEGER, BYTE_BUFFER}, 0, new Object[0]);
        cap.visitVarInsn(Opcodes.ALOAD, 0);
        cap.visitVarInsn(Opcodes.ILOAD, 1);
        cap.visitMethodInsn(Opcodes.INVOKESPECIAL, sup, "capacity", "(I)" + byteBuf, false);
        cap.visitInsn(Opcodes.ARETURN);
        cap.visitMaxs(0, 0);
        cap.visitEnd();
    }

    /** {@code ByteBuffer b = kmem4jBlock;} in local {@code slot}; {@code if (buffer != b) goto notInUse;} */
    private static void blockInUse(final MethodVisitor mv, final String self, final String block, final int slot,
                                   final Label notInUse) {
        mv.visitVarInsn(Opcodes.ALOAD, 0);
        mv.visitFieldInsn(Opcodes.GETFIELD, self, NettyCopy.BLOCK_FIELD, block);
        mv.visitVarInsn(Opcodes.ASTORE, slot);
        mv.visitVarInsn(Opcodes.ALOAD, 0);
        mv.visitFieldInsn(Opcodes.GETFIELD, self, "buffer", block); // Netty's field (same package)
        mv.visitVarInsn(Opcodes.ALOAD, slot);
        mv.visitJumpInsn(Opcodes.IF_ACMPNE, notInUse);
    }

    /** {@code public ByteBuf name(...) { return Derived.newInstance(this, this, <two ints>); }} */
    private static void derived(final ClassWriter cw, final String name, final String desc, final String derived,
                                final String factory, final java.util.function.Consumer<MethodVisitor> twoInts) {
        final MethodVisitor mv = cw.visitMethod(Opcodes.ACC_PUBLIC, name, desc, null, null);
        mv.visitCode();
        mv.visitVarInsn(Opcodes.ALOAD, 0);
        mv.visitVarInsn(Opcodes.ALOAD, 0);
        twoInts.accept(mv);
        mv.visitMethodInsn(Opcodes.INVOKESTATIC, derived, "newInstance", factory + "L" + derived + ";", false);
        mv.visitInsn(Opcodes.ARETURN);
        mv.visitMaxs(0, 0);
        mv.visitEnd();
    }

    /** {@code protected R name(int c)}: what the {@code IntFunction} in {@code field} answers, else {@code super.name(c)}. */
    private static void grow(final ClassWriter cw, final String self, final String sup, final String name,
                             final String field, final String returns) {
        final String desc = "(I)L" + returns + ";";
        final MethodVisitor mv = cw.visitMethod(Opcodes.ACC_PROTECTED, name, desc, null, null);
        mv.visitCode();
        final Label none = new Label();
        mv.visitFieldInsn(Opcodes.GETSTATIC, self, field, "L" + INT_FUNCTION + ";");
        mv.visitInsn(Opcodes.DUP);
        mv.visitJumpInsn(Opcodes.IFNULL, none);
        mv.visitVarInsn(Opcodes.ILOAD, 1);
        mv.visitMethodInsn(Opcodes.INVOKEINTERFACE, INT_FUNCTION, "apply", "(I)L" + OBJECT + ";", true);
        mv.visitInsn(Opcodes.DUP);
        mv.visitJumpInsn(Opcodes.IFNULL, none);
        mv.visitTypeInsn(Opcodes.CHECKCAST, returns);
        mv.visitInsn(Opcodes.ARETURN);
        mv.visitLabel(none); // the function or its answer, null: Netty's own
        mv.visitFrame(Opcodes.F_NEW, 2, new Object[] {self, Opcodes.INTEGER}, 1, new Object[] {OBJECT});
        mv.visitInsn(Opcodes.POP);
        mv.visitVarInsn(Opcodes.ALOAD, 0);
        mv.visitVarInsn(Opcodes.ILOAD, 1);
        mv.visitMethodInsn(Opcodes.INVOKESPECIAL, sup, name, desc, false);
        mv.visitInsn(Opcodes.ARETURN);
        mv.visitMaxs(0, 0);
        mv.visitEnd();
    }

    /** Netty 4.2's {@code CleanableDirectBuffer} over a block served on growth. */
    static byte[] cleanable(final String pkg, final Class<?> cleanable) {
        final String self = pkg + CLEANABLE;
        final ClassWriter cw = new ClassWriter(ClassWriter.COMPUTE_MAXS);
        cw.visit(Opcodes.V11, Opcodes.ACC_PUBLIC | Opcodes.ACC_FINAL | Opcodes.ACC_SUPER, self, null, OBJECT,
            new String[] {Type.getInternalName(cleanable)});
        field(cw, NettyCopy.RELEASE_FIELD, PREDICATE);
        cw.visitField(Opcodes.ACC_PRIVATE | Opcodes.ACC_FINAL, NettyCopy.BUFFER_FIELD, "L" + BYTE_BUFFER + ";", null, null)
            .visitEnd();

        final MethodVisitor init = cw.visitMethod(Opcodes.ACC_PUBLIC, "<init>", "(L" + BYTE_BUFFER + ";)V", null, null);
        init.visitCode();
        init.visitVarInsn(Opcodes.ALOAD, 0);
        init.visitMethodInsn(Opcodes.INVOKESPECIAL, OBJECT, "<init>", "()V", false);
        init.visitVarInsn(Opcodes.ALOAD, 0);
        init.visitVarInsn(Opcodes.ALOAD, 1);
        init.visitFieldInsn(Opcodes.PUTFIELD, self, NettyCopy.BUFFER_FIELD, "L" + BYTE_BUFFER + ";");
        init.visitInsn(Opcodes.RETURN);
        init.visitMaxs(0, 0);
        init.visitEnd();

        getter(cw, self, "buffer", "L" + BYTE_BUFFER + ";", NettyCopy.BUFFER_FIELD);

        final MethodVisitor clean = cw.visitMethod(Opcodes.ACC_PUBLIC, "clean", "()V", null, null);
        clean.visitCode();
        final Label none = new Label();
        clean.visitFieldInsn(Opcodes.GETSTATIC, self, NettyCopy.RELEASE_FIELD, "L" + PREDICATE + ";");
        clean.visitInsn(Opcodes.DUP);
        clean.visitJumpInsn(Opcodes.IFNULL, none);
        clean.visitVarInsn(Opcodes.ALOAD, 0);
        clean.visitFieldInsn(Opcodes.GETFIELD, self, NettyCopy.BUFFER_FIELD, "L" + BYTE_BUFFER + ";");
        clean.visitMethodInsn(Opcodes.INVOKEINTERFACE, PREDICATE, "test", "(L" + OBJECT + ";)Z", true);
        clean.visitInsn(Opcodes.POP);
        clean.visitInsn(Opcodes.RETURN);
        clean.visitLabel(none);
        clean.visitFrame(Opcodes.F_NEW, 1, new Object[] {self}, 1, new Object[] {OBJECT});
        clean.visitInsn(Opcodes.POP);
        clean.visitInsn(Opcodes.RETURN);
        clean.visitMaxs(0, 0);
        clean.visitEnd();
        cw.visitEnd();
        return cw.toByteArray();
    }

    /** The factory for Netty's default max capacity (a {@code BiFunction}; see the class comment). */
    static byte[] factory(final String pkg, final Class<?> allocator, final Method leakAware) {
        final String self = pkg + FACTORY;
        final String buf = pkg + BYTE_BUF;
        final ClassWriter cw = new ClassWriter(ClassWriter.COMPUTE_MAXS);
        cw.visit(Opcodes.V11, Opcodes.ACC_PUBLIC | Opcodes.ACC_FINAL | Opcodes.ACC_SUPER, self, null, OBJECT,
            new String[] {"java/util/function/BiFunction"});
        final MethodVisitor init = cw.visitMethod(Opcodes.ACC_PUBLIC, "<init>", "()V", null, null);
        init.visitCode();
        init.visitVarInsn(Opcodes.ALOAD, 0);
        init.visitMethodInsn(Opcodes.INVOKESPECIAL, OBJECT, "<init>", "()V", false);
        init.visitInsn(Opcodes.RETURN);
        init.visitMaxs(0, 0);
        init.visitEnd();
        final MethodVisitor apply = cw.visitMethod(Opcodes.ACC_PUBLIC, "apply",
            "(L" + OBJECT + ";L" + OBJECT + ";)L" + OBJECT + ";", null, null);
        apply.visitCode();
        apply.visitTypeInsn(Opcodes.NEW, buf);
        apply.visitInsn(Opcodes.DUP);
        apply.visitVarInsn(Opcodes.ALOAD, 1);
        apply.visitTypeInsn(Opcodes.CHECKCAST, Type.getInternalName(allocator));
        apply.visitVarInsn(Opcodes.ALOAD, 2);
        apply.visitTypeInsn(Opcodes.CHECKCAST, BYTE_BUFFER);
        apply.visitLdcInsn(Integer.MAX_VALUE);
        apply.visitMethodInsn(Opcodes.INVOKESPECIAL, buf, "<init>",
            "(" + Type.getDescriptor(allocator) + "L" + BYTE_BUFFER + ";I)V", false);
        apply.visitMethodInsn(Opcodes.INVOKESTATIC, Type.getInternalName(leakAware.getDeclaringClass()),
            leakAware.getName(), Type.getMethodDescriptor(leakAware), false);
        apply.visitInsn(Opcodes.ARETURN);
        apply.visitMaxs(0, 0);
        apply.visitEnd();
        cw.visitEnd();
        return cw.toByteArray();
    }

    /** {@code public R name() { return this.field; }}, the field a {@code ByteBuffer}. */
    private static void getter(final ClassWriter cw, final String self, final String name, final String returns,
                               final String field) {
        final MethodVisitor mv = cw.visitMethod(Opcodes.ACC_PUBLIC, name, "()" + returns, null, null);
        mv.visitCode();
        mv.visitVarInsn(Opcodes.ALOAD, 0);
        mv.visitFieldInsn(Opcodes.GETFIELD, self, field, "L" + BYTE_BUFFER + ";");
        mv.visitInsn(Opcodes.ARETURN);
        mv.visitMaxs(0, 0);
        mv.visitEnd();
    }

    private static void field(final ClassWriter cw, final String name, final String type) {
        final FieldVisitor fv = cw.visitField(PSV, name, "L" + type + ";", null, null);
        fv.visitEnd();
    }
}
