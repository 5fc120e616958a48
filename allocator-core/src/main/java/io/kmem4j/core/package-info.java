/**
 * kmem4j's allocator core: a cache-id slab allocator of direct {@code ByteBuffer}s with per-thread
 * magazines and deferred cross-thread free. The public API is {@link io.kmem4j.core.SlabAllocator}
 * with its configuration ({@link io.kmem4j.core.SlabAllocatorConfig}) and statistics
 * ({@link io.kmem4j.core.AllocatorStats}, {@link io.kmem4j.core.CacheStats}); it knows nothing of
 * agents or bytecode.
 *
 * <h2>Rooms: one idea, one class</h2>
 * <pre>
 *   SlabAllocator    facade: public API, allocate hit (serve), free hit (release)
 *   ThreadRegistry   which ThreadCache serves the calling thread (platform, GC cleaner, virtual); ids
 *   ThreadCache      per thread and size class: loaded and previous Magazine, frozen slab; counters;
 *                    the free slow path (spill: swap, depot exchange, flush)
 *   Magazine         a stack of object addresses (push/pop)                    Bonwick and Adams 2001
 *   Refill           the allocation slow path, one named method per tier, down to the JDK
 *   SlabCache        one size class (kmem_cache): partial list, empty slabs, shared magazine, lock
 *   Depot            a cache's full and empty magazines                        Bonwick and Adams 2001
 *   Slab, Counters   bitmap of free objects; the 64-bit counters word with the 16-bit cache id
 *   CacheTable       cache id -> cache, one table                              SLUB cache_id series
 *   PageHeap, Chunk  64 KiB pages in chunks of off-heap memory taken from the JDK's budget
 *   ChunkMap         address -> chunk, O(1), reading only our own tables
 *   RemoteBatches    a thread's outgoing frees for other owners, 32 per CAS   Linux 6.18 UDP RX series
 *   RemoteInbox      an owner's lock-free inbox of deferred frees
 *   RemoteFrees      delivery to inboxes, orphans, absorbing on the owner's slow path
 *   SharedTier       allocation for virtual threads (no private cache)
 *   BufferFactory    zeroing, the JDK's constructor, failure atomicity, sampling, leak registration
 *   SlotRelease      a slab slot's cleaner thunk (owned lifecycle): exactly once by one CAS of the slot's cleaner
 *   Release          a tracked buffer's cleaner thunk when its cleaner is in the JDK's list
 *   ExplicitBuffers  identity and exactly-once release of the explicit (no-cleaner) flavour
 *   Reaper           ended threads, idle threads' caches (revoked), idle decay, trim,
 *                    relief under budget pressure                               Linux cache_reap
 *   AtTheLimit       no chunk fits and the JDK's path cannot serve either: the JDK's Bits.reserveMemory
 *                    loop for kmem4j's memory (ReferenceProcessing: help, one shared System.gc, back-off)
 *   Accounting       statistics snapshot; the invariant equations of debug mode
 *   OutOfLine        calls the JIT cannot inline: the slow paths, and the tracked flavour's hit paths,
 *                    each compiled once instead of into every caller
 *   LeakDetector, SiteSampler, Events (JFR), Zeroing, JdkInternals, Debug
 * </pre>
 * Sources: the SLUB {@code cache_id} patch series for Linux (a 16-bit cache id kept in the slab's
 * counters word, one contiguous table of caches, no pointer from slab to cache); Bonwick, "The Slab
 * Allocator" (USENIX 1994) and Bonwick and Adams, "Magazines and Vmem" (USENIX 2001) for caches,
 * magazines and the depot, with a thread in the place of a CPU; address-ordered allocation against
 * the scattering of LIFO freelists (Wilson, Johnstone, Neely and Boles, "Dynamic Storage
 * Allocation: A Survey and Critical Review", 1995), which keeps traversals of linked objects on
 * consecutive cache lines; the Linux 6.18 UDP receive series' deferred free
 * ({@code skb_attempt_defer_free}: a free goes back to the CPU that allocated, batched, with fewer
 * atomics and hot fields padded apart) and mimalloc's thread-free lists.
 *
 * <h2>The invariant</h2>
 * An object handed out of a slab's bitmap ({@code inuse}) is in exactly one of these places:
 * <pre>
 *   per slab:   objects == inuse + free_in_bitmap
 *   per cache:  sum(inuse) == live buffers
 *                           + rounds in every thread cache's loaded and previous magazine
 *                           + rounds in the depot's full magazines + the shared magazine
 *                           + frees waiting in outgoing batches (RemoteBatches)
 *                           + frees in owners' inboxes + frees in the orphans
 * </pre>
 * A frozen slab's free objects are in its bitmap, not counted in {@code inuse}. Debug mode
 * ({@code -Dkmem4j.debug=true}) checks the first equation on slow paths; tests check both
 * ({@code Accounting.checkInvariants}) after their threads ended.
 *
 * <h2>Locks and races</h2>
 * Locks, and what each protects (no lock is ever taken on a hit path; no {@code synchronized} on a
 * public instance):
 * <pre>
 *   Reaper.reapLock           one reap or trim at a time; a thread about to grow the heap only tries it
 *   SlabCache.lock            per size class: its depot, partial list, empty slabs, shared magazine and the
 *                             bitmap and counters word of each of its slabs that is not frozen
 *   PageHeap.growSerializer   one chunk reservation at a time; never held with a cache lock
 *   PageHeap.growLock         publishing or removing a chunk (the chunk array, the ChunkMap)
 *   ThreadRegistry.lock       ids, the registry's table, retired statistics, RemoteFrees' inbox table
 *   CacheTable (class)        registering and releasing cache ids
 *   ReferenceProcessing.COLLECTING  one requested collection at a time; taken with no kmem4j lock held
 *   the JDK's cleaner lock    taken by the JDK when a tracked buffer is born and released (not ours)
 * </pre>
 * Order: reapLock, then one cache lock (never two), then growLock; the registry's lock and the cache
 * table's are leaves. growSerializer is taken only with no cache lock held (a thread that would give
 * a chunk back may need that cache lock). A frozen slab's bitmap is written by its owner only,
 * without a lock.
 *
 * <p>Races argued, not locked:
 * <ul>
 *   <li><b>The free path reads a slab's counters word and owner without the cache lock.</b> The
 *       cache id bits never change while the slab exists, and the slab cannot be freed while the
 *       object being released is counted in its {@code inuse}: the releasing thread holds that object.
 *       The owner is read with acquire semantics and written with release semantics under the cache
 *       lock; a stale owner only sends the free to a thread that no longer owns the slab, which puts
 *       it in its magazines (magazines take any object of their class) or, its inbox closed, to the
 *       orphans.</li>
 *   <li><b>Thread-cache ids are reused.</b> An id goes back only after its thread ended and its
 *       cache was emptied and its slabs unfrozen; a free aimed at the old owner reaches the new
 *       thread's inbox (harmless, as above) or a closed inbox, which refuses it (then the orphans).</li>
 *   <li><b>Statistics are read without locks.</b> Each counter is a plain {@code long} written by one
 *       thread (the shared kinds: atomically) and summed by {@code stats()} racily: a figure may be a
 *       moment old and the figures of one snapshot need not add up exactly; a {@code long} is never
 *       torn on the 64-bit JVMs kmem4j runs on.</li>
 *   <li><b>The inbox is a take-all Treiber stack.</b> Pushers link their batch privately and publish
 *       it with one CAS; the owner takes everything with one swap, so there is no ABA problem.</li>
 *   <li><b>The explicit flavour's release is one CAS on the buffer's address field.</b> Of two racing
 *       releases exactly one wins; the loser sees the cleared address and counts a double free.</li>
 *   <li><b>The reaper empties an idle live thread's cache without a lock on the hit paths.</b> Each
 *       hit path reads the cache's revocation word (volatile) before it touches the magazines, and
 *       runs from that read to its last store within one call into this package. The reaper sets the
 *       word, then takes the owner's stack ({@code Thread.getStackTrace}: a handshake on JDK 19+, a
 *       global safepoint on 17; after either the owner's loads see the reaper's earlier stores; a
 *       stack cut at {@code MaxJavaStackTraceDepth} counts as inside); with no frame of this package on it, the
 *       owner is between two calls, and its next one waits until the reaper is done
 *       ({@code ThreadCache.resume}). A carrier's cache is never revoked: a mounted virtual thread's
 *       frames are not on its carrier's stack (a first use as a carrier and a revocation settle by
 *       a volatile write and read on each side).</li>
 *   <li><b>A closed allocator still takes buffers back.</b> Threads new after close get the shared
 *       cache (nobody would adopt a private one); their releases are deferred and drained by trim.</li>
 * </ul>
 *
 * <h2>Hit paths</h2>
 * Allocate: {@code SlabAllocator.serve}; free: {@code SlabAllocator.release}. Each states its whole
 * cost in its comment; everything else is a slow path in a class of its own. Entry points that may
 * run on a foreign thread end in {@code Mt} ({@code RemoteFrees.deliverMt}, {@code orphanMt},
 * {@code RemoteInbox.pushMt}), as in mimalloc.
 */
package io.kmem4j.core;
