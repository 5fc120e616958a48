/**
 * The agent's configuration: keys from agent arguments, system properties, the environment and a
 * file, validated with messages that name the key and the allowed range
 * ({@link io.kmem4j.agent.config.AgentConfig}); the agent's version.
 */
package io.kmem4j.agent.config;
