package io.kmem4j.agent.bridge;

import java.lang.instrument.ClassFileTransformer;
import java.lang.instrument.Instrumentation;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.security.ProtectionDomain;

import io.kmem4j.core.UnsupportedJdkException;

/**
 * Rewrites {@code java.nio.ByteBuffer.allocateDirect(int)} by retransformation, without a bytecode
 * library: its body, on every JDK from 17 to 27 the nine bytes of {@code return new
 * DirectByteBuffer(capacity);}, becomes
 * <pre>
 *   return Kmem4jBridge.allocateDirect(capacity);   // iload_0; invokestatic; areturn
 * </pre>
 * and the bridge's {@code allocateDirect} (defined with the bridge, {@link BootstrapBridge}) asks the
 * bridge's {@code allocator} first and otherwise runs that same {@code new DirectByteBuffer(capacity)}.
 * The new body has no branch, so it needs no stack map frame: the rewrite appends six constant-pool
 * entries and swaps one {@code Code} attribute, nothing else. That keeps ASM (some 30 classes, 300 KB
 * of class files, read and run in the interpreter) off the start-up path of every JVM the agent is
 * attached to.
 *
 * <p>Anything else in the method (another agent's rewrite before this one, now or at a later
 * retransformation; a JDK whose body is not those nine bytes; a class file this does not parse): this
 * transformer has {@link JdkClassTransformer} put its ASM prologue in front of the body, as before this
 * rewrite existed. A bridge defined by an older kmem4j, without {@code allocateDirect}: the prologue
 * alone. The transformer stays registered, so a later retransformation of {@code ByteBuffer} by anyone
 * keeps one or the other.
 *
 * <p>A JDK whose class files are newer than the bundled ASM reads (version 71, JDK 27) is refused
 * ({@link #unreadable}) as before, with an {@link UnsupportedJdkException} naming both versions: the
 * agent's other rewrites need ASM. {@code -Dkmem4j.simulateUnsupportedJdk=classFileVersion} makes the
 * class file look one version newer, to test that on any JDK.
 *
 * <p>Threads: {@link #transform} runs on whichever thread retransforms {@code ByteBuffer}.
 */
public final class AllocateDirectRewrite implements ClassFileTransformer {
    /** The value of {@code -Dkmem4j.simulateUnsupportedJdk} that simulates too new a class file. */
    static final String SIMULATE_CLASS_FILE_VERSION = "classFileVersion";
    /** The newest class-file major version the bundled ASM reads (JDK 27; a constant, so no ASM class loads). */
    static final int NEWEST_READABLE = net.bytebuddy.jar.asm.Opcodes.V27 & 0xFFFF;

    private static final String BYTE_BUFFER = "java/nio/ByteBuffer";
    private static final String DIRECT = "java/nio/DirectByteBuffer";
    private static final String METHOD = "allocateDirect";
    private static final String DESCRIPTOR = "(I)Ljava/nio/ByteBuffer;";
    private static final int ACC_STATIC = 0x0008;

    private volatile String unsupported;
    private volatile boolean prologueSaid;
    private volatile Throwable failure;
    private volatile boolean rewrote;

    AllocateDirectRewrite() {
    }

    /**
     * Rewrites {@code ByteBuffer.allocateDirect(int)} to call the bridge's {@code allocateDirect}, or,
     * when its body is not the JDK's known one or the bridge has no such method, has
     * {@link JdkClassTransformer} put its prologue in front of it.
     *
     * @param inst    the JVM's instrumentation
     * @param members the bridge's members
     * @throws UnsupportedJdkException when this JDK's class files are newer than the bundled ASM reads
     * @throws IllegalStateException   when the rewrite failed; the transformer is removed again
     */
    public static void install(final Instrumentation inst, final BootstrapBridge.Members members) throws Exception {
        if (members.allocateDirect == null) {
            JdkClassTransformer.allocateDirect(inst); // a bridge of an older kmem4j
            return;
        }
        final AllocateDirectRewrite t = new AllocateDirectRewrite();
        inst.addTransformer(t, true);
        try {
            inst.retransformClasses(ByteBuffer.class);
        } catch (final Throwable e) {
            inst.removeTransformer(t);
            throw e;
        }
        if (t.rewrote) {
            return;
        }
        inst.removeTransformer(t);
        if (t.unsupported != null) {
            throw new UnsupportedJdkException(t.unsupported);
        }
        throw new IllegalStateException("rewriting " + ByteBuffer.class.getName() + "." + METHOD + " failed: "
            + (t.failure != null ? t.failure : "the class was not offered for retransformation"), t.failure);
    }

    /**
     * @param classFile a class file
     * @param simulate  true to treat it as one version newer than the bundled ASM reads
     * @return why it cannot be rewritten (its major version is newer than ASM knows), or {@code null}
     */
    static String unreadable(final byte[] classFile, final boolean simulate) {
        final int major = simulate ? NEWEST_READABLE + 1 : ((classFile[6] & 0xff) << 8) | (classFile[7] & 0xff);
        if (major <= NEWEST_READABLE) {
            return null;
        }
        return "the class files of " + UnsupportedJdkException.runningJdk() + " are version " + major
            + (simulate ? " (simulated: -Dkmem4j.simulateUnsupportedJdk=" + SIMULATE_CLASS_FILE_VERSION + ")" : "")
            + ", newer than the bytecode library in kmem4j reads (ASM: up to version " + NEWEST_READABLE
            + ", JDK " + (NEWEST_READABLE - 44) + ")";
    }

    @Override
    public byte[] transform(final Module module, final ClassLoader loader, final String className,
                            final Class<?> classBeingRedefined, final ProtectionDomain protectionDomain,
                            final byte[] classfileBuffer) {
        if (loader != null || !BYTE_BUFFER.equals(className)) {
            return null;
        }
        try {
            final String problem = unreadable(classfileBuffer,
                SIMULATE_CLASS_FILE_VERSION.equals(System.getProperty("kmem4j.simulateUnsupportedJdk")));
            if (problem != null) {
                unsupported = problem;
                return null;
            }
            byte[] bytes;
            try {
                bytes = rewrite(classfileBuffer);
            } catch (final IllegalArgumentException unparsed) {
                bytes = null; // ASM may read what this does not: the prologue
            }
            if (bytes == null) {
                bytes = withPrologue(module, loader, className, classBeingRedefined, protectionDomain, classfileBuffer);
            }
            if (bytes != null) {
                rewrote = true;
            }
            return bytes;
        } catch (final Throwable t) {
            failure = t; // a transformer must not throw; install() reports it
            return null;
        }
    }

    /**
     * A body of another shape, now or at any later retransformation (another agent changed it first):
     * ASM's prologue in front of it ({@link JdkClassTransformer}, loaded only then), so that kmem4j keeps
     * serving. One DEBUG line the first time.
     */
    private byte[] withPrologue(final Module module, final ClassLoader loader, final String className,
                                final Class<?> classBeingRedefined, final ProtectionDomain protectionDomain,
                                final byte[] classfileBuffer) {
        final JdkClassTransformer p = JdkClassTransformer.allocateDirectPrologue();
        final byte[] bytes = p.transform(module, loader, className, classBeingRedefined, protectionDomain,
            classfileBuffer);
        if (bytes == null) {
            failure = new IllegalStateException("a body other than the JDK's, and the prologue failed: " + p.problem());
            return null;
        }
        if (!prologueSaid) {
            prologueSaid = true;
            io.kmem4j.agent.log.AgentLog.get(AllocateDirectRewrite.class).debug("ByteBuffer.allocateDirect's body is"
                + " not the JDK's (another agent's rewrite?): kmem4j puts its prologue in front of it instead");
        }
        return bytes;
    }

    /**
     * @param c {@code ByteBuffer}'s class file
     * @return the class file with {@code allocateDirect(int)}'s body replaced, or {@code null} when that
     *         body is not {@code return new DirectByteBuffer(capacity);}
     * @throws IllegalArgumentException when the class file cannot be parsed (an unknown constant tag)
     */
    static byte[] rewrite(final byte[] c) {
        final ClassFile cf = new ClassFile(c);
        int p = cf.afterPool;
        p += 6; // access flags, this class, super class
        p += 2 + 2 * cf.u2(p); // interfaces
        p = cf.skipMembers(p); // fields
        int methods = cf.u2(p);
        p += 2;
        while (methods-- > 0) {
            final int access = cf.u2(p);
            final boolean wanted = (access & ACC_STATIC) != 0 && cf.utf8Is(cf.u2(p + 2), METHOD)
                && cf.utf8Is(cf.u2(p + 4), DESCRIPTOR);
            int attributes = cf.u2(p + 6);
            p += 8;
            while (attributes-- > 0) {
                final int nameIndex = cf.u2(p);
                final int length = cf.u4(p + 2);
                if (wanted && cf.utf8Is(nameIndex, "Code")) {
                    return cf.isJdkBody(p + 6, length) ? cf.withBody(p, 6 + length, nameIndex, cf.firstLine(p + 6))
                        : null;
                }
                p += 6 + length;
            }
            if (wanted) {
                return null; // no Code attribute: not the JDK's method
            }
        }
        return null;
    }

    /** A class file's constant pool, read once; the rest is walked by offset. */
    private static final class ClassFile {
        private final byte[] c;
        private final int count;
        /** Offset of each constant-pool entry's tag, by index (0 and the second slot of a long/double: 0). */
        private final int[] entry;
        final int afterPool;

        ClassFile(final byte[] c) {
            this.c = c;
            this.count = u2(8);
            this.entry = new int[count];
            int p = 10;
            for (int i = 1; i < count; i++) {
                entry[i] = p;
                final int tag = c[p] & 0xff;
                switch (tag) {
                    case 1: // Utf8
                        p += 3 + u2(p + 1);
                        break;
                    case 3: case 4: // Integer, Float
                    case 9: case 10: case 11: case 12: // Fieldref, Methodref, InterfaceMethodref, NameAndType
                    case 17: case 18: // Dynamic, InvokeDynamic
                        p += 5;
                        break;
                    case 5: case 6: // Long, Double: two slots
                        p += 9;
                        i++;
                        break;
                    case 7: case 8: case 16: case 19: case 20: // Class, String, MethodType, Module, Package
                        p += 3;
                        break;
                    case 15: // MethodHandle
                        p += 4;
                        break;
                    default:
                        throw new IllegalArgumentException("constant pool tag " + tag + " at entry " + i);
                }
            }
            this.afterPool = p;
        }

        int u2(final int p) {
            return ((c[p] & 0xff) << 8) | (c[p + 1] & 0xff);
        }

        int u4(final int p) {
            return (u2(p) << 16) | u2(p + 2);
        }

        int tag(final int index) {
            return index > 0 && index < count && entry[index] != 0 ? c[entry[index]] & 0xff : -1;
        }

        /** Is entry {@code index} the Utf8 {@code s} (ASCII: modified UTF-8 is the same bytes)? */
        boolean utf8Is(final int index, final String s) {
            if (tag(index) != 1) {
                return false;
            }
            final int p = entry[index];
            final int length = u2(p + 1);
            if (length != s.length()) {
                return false;
            }
            for (int k = 0; k < length; k++) {
                if (c[p + 3 + k] != (byte) s.charAt(k)) {
                    return false;
                }
            }
            return true;
        }

        /** Is entry {@code index} the Class {@code name}? */
        boolean classIs(final int index, final String name) {
            return tag(index) == 7 && utf8Is(u2(entry[index] + 1), name);
        }

        /** Members (fields or methods) from {@code p}: the offset after them. */
        int skipMembers(int p) {
            int members = u2(p);
            p += 2;
            while (members-- > 0) {
                int attributes = u2(p + 6);
                p += 8;
                while (attributes-- > 0) {
                    p += 6 + u4(p + 2);
                }
            }
            return p;
        }

        /**
         * Is the Code attribute's content at {@code p} ({@code length} bytes) exactly {@code new
         * DirectByteBuffer; dup; iload_0; invokespecial DirectByteBuffer.<init>(I)V; areturn}, with no
         * exception handler?
         */
        boolean isJdkBody(final int p, final int length) {
            final int codeLength = u4(p + 4);
            final int code = p + 8;
            if (codeLength != 9 || length < 8 + codeLength + 4 || u2(code + codeLength) != 0) {
                return false;
            }
            if ((c[code] & 0xff) != 0xbb || !classIs(u2(code + 1), DIRECT) || (c[code + 3] & 0xff) != 0x59
                || (c[code + 4] & 0xff) != 0x1a || (c[code + 5] & 0xff) != 0xb7 || (c[code + 8] & 0xff) != 0xb0) {
                return false;
            }
            final int ref = u2(code + 6);
            if (tag(ref) != 10 || !classIs(u2(entry[ref] + 1), DIRECT)) {
                return false;
            }
            final int nat = u2(entry[ref] + 3);
            return tag(nat) == 12 && utf8Is(u2(entry[nat] + 1), "<init>") && utf8Is(u2(entry[nat] + 3), "(I)V");
        }

        /**
         * @param p a Code attribute's content
         * @return {@code {LineNumberTable's name index, the line of pc 0}} from its LineNumberTable, or
         *         {@code null} when it has none (stack traces then name the file without a line)
         */
        int[] firstLine(final int p) {
            int q = p + 8 + u4(p + 4);
            q += 2 + 8 * u2(q); // exception table
            int attributes = u2(q);
            q += 2;
            while (attributes-- > 0) {
                final int name = u2(q);
                if (utf8Is(name, "LineNumberTable") && u2(q + 6) > 0) {
                    for (int k = 0, n = u2(q + 6); k < n; k++) {
                        if (u2(q + 8 + 4 * k) == 0) {
                            return new int[] {name, u2(q + 10 + 4 * k)};
                        }
                    }
                }
                q += 6 + u4(q + 2);
            }
            return null;
        }

        /**
         * The class file with six constant-pool entries appended (the bridge's {@code allocateDirect}
         * Methodref) and the attribute at {@code at} ({@code length} bytes, the method's Code) replaced
         * by {@code iload_0; invokestatic Kmem4jBridge.allocateDirect; areturn}, on the line the JDK's
         * body began ({@code line}: {@link #firstLine}, or {@code null}).
         */
        byte[] withBody(final int at, final int length, final int codeName, final int[] line) {
            final int n = count; // the first new index
            if (n + 6 > 0xffff) {
                return null;
            }
            final java.io.ByteArrayOutputStream out = new java.io.ByteArrayOutputStream(c.length + 128);
            out.write(c, 0, 8); // magic, minor, major
            u2(out, n + 6);
            out.write(c, 10, afterPool - 10);
            utf8(out, BootstrapBridge.CLASS_NAME.replace('.', '/')); // n
            out.write(7);
            u2(out, n); // n + 1: Class
            utf8(out, BootstrapBridge.ALLOCATE_DIRECT); // n + 2
            utf8(out, DESCRIPTOR); // n + 3
            out.write(12);
            u2(out, n + 2);
            u2(out, n + 3); // n + 4: NameAndType
            out.write(10);
            u2(out, n + 1);
            u2(out, n + 4); // n + 5: Methodref
            out.write(c, afterPool, at - afterPool);
            final byte[] code = {0x1a, (byte) 0xb8, (byte) ((n + 5) >>> 8), (byte) (n + 5), (byte) 0xb0};
            u2(out, codeName);
            final int lines = line == null ? 0 : 2 + 4 + 2 + 4; // LineNumberTable: one entry
            final int attributeLength = 2 + 2 + 4 + code.length + 2 + 2 + lines;
            u2(out, attributeLength >>> 16);
            u2(out, attributeLength);
            u2(out, 1); // max_stack
            u2(out, 1); // max_locals
            u2(out, 0);
            u2(out, code.length);
            out.write(code, 0, code.length);
            u2(out, 0); // exception table
            // attributes: no stack map frame (no branch); the line, so that traces read as before
            u2(out, line == null ? 0 : 1);
            if (line != null) {
                u2(out, line[0]);
                u2(out, 0);
                u2(out, 6);
                u2(out, 1);
                u2(out, 0); // start_pc
                u2(out, line[1]);
            }
            out.write(c, at + length, c.length - at - length);
            return out.toByteArray();
        }

        private static void u2(final java.io.ByteArrayOutputStream out, final int v) {
            out.write(v >>> 8);
            out.write(v);
        }

        private static void utf8(final java.io.ByteArrayOutputStream out, final String ascii) {
            final byte[] b = ascii.getBytes(StandardCharsets.US_ASCII);
            out.write(1);
            u2(out, b.length);
            out.write(b, 0, b.length);
        }
    }
}
