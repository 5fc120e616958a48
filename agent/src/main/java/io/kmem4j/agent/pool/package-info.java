/**
 * Buffer pools served by kmem4j's explicit (no-cleaner) flavour: a pool is a list of methods
 * ({@link io.kmem4j.agent.pool.PoolSpec}, {@link io.kmem4j.agent.pool.PoolMember}) whose roles follow
 * from their shapes ({@link io.kmem4j.agent.pool.PoolShape}); {@link io.kmem4j.agent.pool.Presets}
 * names the pools of libraries (Netty); the {@link io.kmem4j.agent.pool.PoolTransformer} rewrites
 * them with advice in whatever class loader defines them, and the
 * {@link io.kmem4j.agent.pool.PoolRouter} answers the advice through the bridge's pool fields.
 */
package io.kmem4j.agent.pool;
