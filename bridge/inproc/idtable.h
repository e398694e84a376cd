/* bridge/inproc/idtable.h - dense id -> pointer tables: lock-free reads, serialised inserts.
 *
 * Two levels (chunks of 1024 slots, allocated on first use) so that the table never
 * moves: a reader holding a slot's address is never invalidated. Entries are never
 * removed. Used for the class registry and the callback method table.
 */
#ifndef P4J_IDTABLE_H
#define P4J_IDTABLE_H

#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#define P4J_IDTABLE_BITS 10
#define P4J_IDTABLE_CHUNK (1u << P4J_IDTABLE_BITS)
#define P4J_IDTABLE_CHUNKS 1024u
#define P4J_IDTABLE_MAX (P4J_IDTABLE_CHUNKS * P4J_IDTABLE_CHUNK) /* ids below this */

typedef struct p4j_idtable {
    void **chunks[P4J_IDTABLE_CHUNKS]; /* read with acquire loads */
} p4j_idtable;

/* Returns the entry at `id`, or NULL. Any thread, no lock. */
static inline void *p4j_idtable_get(p4j_idtable *t, uint32_t id)
{
    if (id >= P4J_IDTABLE_MAX)
        return NULL;
    void **chunk = __atomic_load_n(&t->chunks[id >> P4J_IDTABLE_BITS], __ATOMIC_ACQUIRE);
    return chunk ? __atomic_load_n(&chunk[id & (P4J_IDTABLE_CHUNK - 1)], __ATOMIC_ACQUIRE) : NULL;
}

/* Publishes `v` at `id` unless an entry is already there, and returns the entry now at
 * `id` (v or the earlier one); NULL when `id` is too large or memory ran out. Callers
 * serialise their puts (their own mutex); gets may run concurrently. */
static inline void *p4j_idtable_put(p4j_idtable *t, uint32_t id, void *v)
{
    if (id >= P4J_IDTABLE_MAX)
        return NULL;
    void **chunk = t->chunks[id >> P4J_IDTABLE_BITS];
    if (!chunk) {
        if (!(chunk = calloc(P4J_IDTABLE_CHUNK, sizeof *chunk)))
            return NULL;
        __atomic_store_n(&t->chunks[id >> P4J_IDTABLE_BITS], chunk, __ATOMIC_RELEASE);
    }
    void **slot = &chunk[id & (P4J_IDTABLE_CHUNK - 1)];
    if (*slot)
        return *slot;
    __atomic_store_n(slot, v, __ATOMIC_RELEASE);
    return v;
}

#endif /* P4J_IDTABLE_H */
