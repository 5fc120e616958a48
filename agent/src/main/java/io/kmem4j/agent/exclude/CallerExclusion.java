package io.kmem4j.agent.exclude;

import java.lang.reflect.Method;
import java.nio.ByteBuffer;
import java.util.List;

import net.bytebuddy.asm.AsmVisitorWrapper;
import net.bytebuddy.asm.MemberSubstitution;
import net.bytebuddy.matcher.ElementMatchers;
import net.bytebuddy.pool.TypePool;

/**
 * Caller exclusion ({@code excludeCallers}): in classes of the excluded packages, every call
 * {@code ByteBuffer.allocateDirect(int)} becomes {@code Kmem4jBridge.allocateDirectJdk(int)}, the
 * JDK's own body (ByteBuddy {@code MemberSubstitution}), so those callers never reach kmem4j and no
 * other caller pays anything for the exclusion. A class load costs one prefix test per excluded
 * package. The rewrite is applied by the agent's class transformer, together with any pool advice
 * for the same class.
 *
 * <p>Immutable; any thread.
 */
public final class CallerExclusion {
    /** Excluded package prefixes, internal form ({@code com/acme/}). */
    private final String[] prefixes;
    private final AsmVisitorWrapper substitution;

    /**
     * @param packages          package prefixes in binary form ({@code com.acme.}), as configured
     * @param allocateDirectJdk the bridge's {@code allocateDirectJdk(int)}
     * @param bootTypes         class files of the bootstrap loader ({@code java.nio.ByteBuffer})
     */
    public CallerExclusion(final List<String> packages, final Method allocateDirectJdk, final TypePool bootTypes) {
        this.prefixes = packages.stream().map(s -> s.replace('.', '/')).toArray(String[]::new);
        this.substitution = MemberSubstitution.relaxed()
            .with(new MemberSubstitution.TypePoolResolver.ForExplicitPool(bootTypes))
            .method(ElementMatchers.named("allocateDirect").and(ElementMatchers.takesArguments(int.class))
                .and(ElementMatchers.isDeclaredBy(ByteBuffer.class)))
            .replaceWith(allocateDirectJdk)
            .on(ElementMatchers.any());
    }

    /** @return true when the class {@code internalName} ({@code com/acme/Foo}) is in an excluded package. */
    public boolean excludes(final String internalName) {
        for (final String prefix : prefixes) {
            if (internalName.startsWith(prefix)) {
                return true;
            }
        }
        return false;
    }

    /** @return the rewrite of an excluded class: its {@code allocateDirect} call sites go to the JDK. */
    public AsmVisitorWrapper rewrite() {
        return substitution;
    }
}
