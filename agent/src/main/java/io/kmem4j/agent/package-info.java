/**
 * The agent's entry: {@link io.kmem4j.agent.Kmem4jAgent} (the one class the application's loader
 * sees) and {@link io.kmem4j.agent.AgentInstaller}, which wires the rooms below in order.
 *
 * <pre>
 *   Kmem4jAgent ──▶ AgentInstaller ──▶ config   configuration keys, validation, version
 *                                  ├─▶ bridge   java.nio.Kmem4jBridge, allocateDirect advice, interceptor
 *                                  ├─▶ pool     buffer pools and presets (advice in the pools' classes)
 *                                  ├─▶ exclude  excludeCallers: call sites that go to the JDK
 *                                  ├─▶ jmx      the MXBeans (Allocator, SlabCache, Pools), slabinfo
 *                                  └─▶ log      the agent's own log and failure reporting
 *   cli: java -jar kmem4j-agent.jar attach | slabtop (reads the jmx beans of another JVM)
 * </pre>
 *
 * Package dependencies point down only: entry → config, bridge, pool, exclude, jmx, log;
 * config → pool; pool → bridge, exclude, log; jmx → pool; bridge → log. None of them knows the
 * slab allocator's internals: they use {@code io.kmem4j.core}'s public API.
 */
package io.kmem4j.agent;
