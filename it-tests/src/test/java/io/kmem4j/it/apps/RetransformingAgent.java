package io.kmem4j.it.apps;

import static net.bytebuddy.matcher.ElementMatchers.isAbstract;
import static net.bytebuddy.matcher.ElementMatchers.named;
import static net.bytebuddy.matcher.ElementMatchers.not;
import static net.bytebuddy.matcher.ElementMatchers.takesArguments;

import java.lang.instrument.Instrumentation;
import java.nio.ByteBuffer;
import net.bytebuddy.agent.builder.AgentBuilder;
import net.bytebuddy.asm.Advice;

/**
 * Someone else's agent: a small ByteBuddy agent, as APM agents are, that retransforms
 * {@code java.nio.ByteBuffer} and {@code java.nio.DirectByteBuffer} with advice of its own on
 * {@code allocateDirect}, {@code duplicate} and {@code slice()}, counting calls in the system properties
 * {@code retransforming-agent.<method>} (advice inlined into {@code java.base} can reach only bootstrap
 * types). {@link #retransformAgain()} retransforms them, and the JDK cleaner's class, once more, as such an
 * agent may at any time. Jar manifest: {@code Premain-Class}, {@code Agent-Class},
 * {@code Can-Retransform-Classes: true}; ByteBuddy must be on the application's class path.
 */
public final class RetransformingAgent {

    private static volatile Instrumentation instrumentation;

    private RetransformingAgent() {
    }

    public static void premain(String args, Instrumentation inst) {
        install(inst);
    }

    public static void agentmain(String args, Instrumentation inst) {
        install(inst);
    }

    private static void install(Instrumentation inst) {
        // keeps ByteBuddy off sun.misc.Unsafe (JDK 24+ warns about its memory methods otherwise)
        System.setProperty("net.bytebuddy.safe", "true");
        instrumentation = inst;
        new AgentBuilder.Default()
                .disableClassFormatChanges()
                .with(AgentBuilder.RedefinitionStrategy.RETRANSFORMATION)
                .ignore(net.bytebuddy.matcher.ElementMatchers.none())
                .type(named("java.nio.ByteBuffer").or(named("java.nio.DirectByteBuffer")))
                .transform((builder, type, loader, module, domain) -> builder.visit(Advice.to(CountAdvice.class)
                        .on(not(isAbstract()).and(named("allocateDirect").or(named("duplicate"))
                                .or(named("slice").and(takesArguments(0)))))))
                .installOn(inst);
        System.out.println("retransforming-agent: installed");
    }

    /** Retransforms {@code ByteBuffer}, {@code DirectByteBuffer} and the JDK cleaner's class again. */
    public static void retransformAgain() throws Exception {
        Class<?> cleaner;
        try {
            cleaner = Class.forName("java.nio.BufferCleaner$PhantomCleaner");
        } catch (ClassNotFoundException before26) {
            cleaner = Class.forName("jdk.internal.ref.Cleaner");
        }
        instrumentation.retransformClasses(ByteBuffer.class, Class.forName("java.nio.DirectByteBuffer"), cleaner);
    }

    /** Counts calls; inlined into the JDK's methods. */
    static final class CountAdvice {
        private CountAdvice() {
        }

        @Advice.OnMethodEnter
        static void enter(@Advice.Origin("#m") String method) {
            String key = "retransforming-agent." + method;
            String count = System.getProperty(key);
            System.setProperty(key, count == null ? "1" : String.valueOf(Long.parseLong(count) + 1));
        }
    }
}
