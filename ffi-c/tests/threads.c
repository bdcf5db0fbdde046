/* Readers place keys while a writer keeps deriving rings and swapping them
 * in through ring_clone/ring_free: every answer must come from one whole
 * snapshot (a member of that snapshot, its preference list distinct). */
#define _POSIX_C_SOURCE 200809L
#include <pthread.h>
#include <time.h>
#include <stdatomic.h>
#include <string.h>

#include "check.h"
#include "ring.h"

enum { READERS = 4, BATCHES = 60, NODES = 8 };

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static ring_t *current;
static atomic_int readers_left = READERS;
static atomic_long lookups, bad, swaps;

static ring_t *acquire(void) {
    pthread_mutex_lock(&lock);
    ring_t *ring = ring_clone(current);
    pthread_mutex_unlock(&lock);
    return ring;
}

static void *reader(void *arg) {
    (void)arg;
    char key[32];
    long n = 0;
    for (int batch = 0; batch < BATCHES; batch++) {
        ring_t *ring = acquire();
        size_t count = ring_node_count(ring);
        for (int k = 0; k < 200; k++, n++) {
            int len = snprintf(key, sizeof key, "key-%ld", n);
            size_t index, list[3], got;
            const char *id;
            size_t id_len;
            if (ring_get_node(ring, (const uint8_t *)key, (size_t)len, &index, &id, &id_len) != RING_OK ||
                index >= count || id_len == 0)
                atomic_fetch_add(&bad, 1);
            if (ring_get_nodes(ring, (const uint8_t *)key, (size_t)len, list, 3, &got) != RING_OK || got != 3 ||
                list[0] != index || list[0] == list[1] || list[1] == list[2] || list[0] == list[2])
                atomic_fetch_add(&bad, 1);
        }
        atomic_fetch_add(&lookups, 200);
        ring_free(ring);
        /* Give the writer a turn between batches (valgrind runs one thread at a time). */
        nanosleep(&(struct timespec){.tv_nsec = 100000}, NULL);
    }
    atomic_fetch_sub(&readers_left, 1);
    return NULL;
}

int main(void) {
    const char *ids[NODES] = {"n0", "n1", "n2", "n3", "n4", "n5", "n6", "n7"};
    size_t lens[NODES] = {2, 2, 2, 2, 2, 2, 2, 2};
    CHECK(ring_new(ids, lens, NULL, NULL, NULL, NODES, 64, 0, &current) == RING_OK, "initial ring");
    pthread_t threads[READERS];
    for (int i = 0; i < READERS; i++) pthread_create(&threads[i], NULL, reader, NULL);

    /* Swap rings until every reader has finished its batches. */
    for (int s = 0; atomic_load(&readers_left) > 0; s++) {
        ring_t *base = acquire(), *next = NULL;
        ring_result rc = (s % 2 == 0) ? ring_with_node(base, "extra", 5, 1.5, NULL, 0, &next)
                                      : ring_without_node(base, "extra", 5, &next);
        CHECK(rc == RING_OK, "derive %d: %s", s, ring_last_error());
        ring_free(base);
        pthread_mutex_lock(&lock);
        ring_t *old = current;
        current = next;
        pthread_mutex_unlock(&lock);
        ring_free(old);
        atomic_fetch_add(&swaps, 1);
        nanosleep(&(struct timespec){.tv_nsec = 50000}, NULL);
    }
    for (int i = 0; i < READERS; i++) pthread_join(threads[i], NULL);
    ring_free(current);
    CHECK(atomic_load(&bad) == 0, "%ld inconsistent answers", atomic_load(&bad));
    CHECK(atomic_load(&lookups) == (long)READERS * BATCHES * 200, "every reader finished");
    CHECK(atomic_load(&swaps) >= 10, "only %ld swaps happened while readers ran", atomic_load(&swaps));
    printf("C threads: %ld swaps during %ld lookups\n", atomic_load(&swaps), atomic_load(&lookups));
    return CHECK_SUMMARY("C threads");
}
