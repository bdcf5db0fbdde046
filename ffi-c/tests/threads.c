/* Concurrency stress: reader threads place keys while a writer keeps
 * deriving rings (remove x, add y, remove y, add x, ...) and swapping them in
 * through ring_clone/ring_free, for every algorithm, about 10 s in all
 * (argv[2] or SHARDRING_STRESS_SECS changes it). Every answer must come from
 * one whole snapshot: a reader's ring_get_node, ring_get_nodes and
 * ring_get_node_batch answers must equal those of a ring rebuilt from that
 * snapshot's JSON, which the writer records (by fingerprint) before
 * publishing the snapshot. */
#define _POSIX_C_SOURCE 200809L
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "check.h"
#include "ring.h"

enum { READERS = 3, KEYS = 64, LIST = 3, RECORDS = 4096 };

/* What a rebuilt snapshot answers for every key. */
typedef struct {
    uint64_t fingerprint;
    size_t owner[KEYS], list[KEYS][LIST], listed[KEYS];
} record_t;

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static ring_t *current;
static record_t records[RECORDS];
static size_t record_count;
static atomic_int done;
static atomic_long reads, bad;
static char keys[KEYS][24];
static size_t key_lens[KEYS];
static const uint8_t *key_ptrs[KEYS];

static double now(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

/* Records what `ring` answers, from a ring rebuilt from its JSON. */
static void record(const ring_t *ring) {
    char *json;
    size_t json_len;
    ring_t *rebuilt = NULL;
    CHECK(ring_to_json(ring, &json, &json_len) == RING_OK && ring_new_from_json(json, json_len, &rebuilt) == RING_OK,
          "rebuild: %s", ring_last_error());
    ring_string_free(json);
    if (!rebuilt) return;
    record_t r = {.fingerprint = ring_fingerprint(rebuilt)};
    CHECK(r.fingerprint == ring_fingerprint(ring), "rebuilt fingerprint");
    for (int k = 0; k < KEYS; k++) {
        ring_get_node(rebuilt, key_ptrs[k], key_lens[k], &r.owner[k], NULL, NULL);
        ring_get_nodes(rebuilt, key_ptrs[k], key_lens[k], r.list[k], LIST, &r.listed[k]);
    }
    ring_free(rebuilt);
    pthread_mutex_lock(&lock);
    int known = 0;
    for (size_t i = 0; i < record_count; i++) known |= records[i].fingerprint == r.fingerprint;
    if (!known && record_count < RECORDS) records[record_count++] = r;
    pthread_mutex_unlock(&lock);
}

static const record_t *record_of(uint64_t fingerprint) {
    const record_t *found = NULL;
    pthread_mutex_lock(&lock);
    for (size_t i = 0; i < record_count && !found; i++)
        if (records[i].fingerprint == fingerprint) found = &records[i];
    pthread_mutex_unlock(&lock);
    return found;
}

static void *reader(void *arg) {
    (void)arg;
    size_t batch[KEYS];
    while (!atomic_load(&done)) {
        pthread_mutex_lock(&lock);
        ring_t *ring = ring_clone(current);
        pthread_mutex_unlock(&lock);
        const record_t *r = record_of(ring_fingerprint(ring));
        long wrong = r == NULL;
        wrong += ring_get_node_batch(ring, key_ptrs, key_lens, KEYS, batch, KEYS) != RING_OK;
        for (int k = 0; r && k < KEYS; k++) {
            size_t index, list[LIST], listed;
            wrong += ring_get_node(ring, key_ptrs[k], key_lens[k], &index, NULL, NULL) != RING_OK;
            wrong += ring_get_nodes(ring, key_ptrs[k], key_lens[k], list, LIST, &listed) != RING_OK;
            wrong += index != r->owner[k] || batch[k] != index || listed != r->listed[k];
            for (size_t i = 0; i < listed && i < LIST; i++) wrong += list[i] != r->list[k][i];
        }
        ring_free(ring);
        atomic_fetch_add(&bad, wrong);
        atomic_fetch_add(&reads, 1);
        /* Give the writer a turn (valgrind runs one thread at a time). */
        nanosleep(&(struct timespec){.tv_nsec = 20000}, NULL);
    }
    return NULL;
}

/* Stresses one algorithm for `seconds`; returns the number of swaps. */
static long stress(const char *algorithm, double seconds) {
    const char *ids[9] = {"10.0.0.1:11211", "10.0.0.2:11211", "10.0.0.3:11211", "10.0.0.4:11211", "10.0.0.5:11211",
                          "10.0.0.6:11211", "10.0.0.7:11211", "10.0.0.8:11211", "10.0.0.100:11211"};
    size_t lens[9];
    for (int i = 0; i < 9; i++) lens[i] = strlen(ids[i]);
    ring_options_t options = {0};
    options.algorithm = algorithm;
    ring_t *first = NULL;
    CHECK(ring_new_with_options_sized(ids, lens, NULL, NULL, NULL, 9, &options, sizeof options, &first) == RING_OK,
          "%s: %s", algorithm, ring_last_error());
    if (!first) return 0;
    record_count = 0;
    record(first);
    current = first;
    atomic_store(&done, 0);
    pthread_t threads[READERS];
    for (int i = 0; i < READERS; i++) pthread_create(&threads[i], NULL, reader, NULL);
    long swaps = 0;
    for (double end = now() + seconds; now() < end && record_count < RECORDS; swaps++) {
        pthread_mutex_lock(&lock);
        ring_t *base = ring_clone(current), *next = NULL;
        pthread_mutex_unlock(&lock);
        const char *x = "10.0.0.100:11211", *y = "10.0.0.101:11211";
        ring_result rc;
        switch (swaps % 4) {
            case 0: rc = ring_without_node(base, x, strlen(x), &next); break;
            case 1: rc = ring_with_node(base, y, strlen(y), 1.0, NULL, 0, &next); break;
            case 2: rc = ring_without_node(base, y, strlen(y), &next); break;
            default: rc = ring_with_node(base, x, strlen(x), 1.0, NULL, 0, &next); break;
        }
        CHECK(rc == RING_OK, "%s: derive %ld: %s", algorithm, swaps, ring_last_error());
        ring_free(base);
        if (!next) break;
        record(next);
        pthread_mutex_lock(&lock);
        ring_t *old = current;
        current = next;
        pthread_mutex_unlock(&lock);
        ring_free(old);
        nanosleep(&(struct timespec){.tv_nsec = 20000}, NULL);
    }
    atomic_store(&done, 1);
    for (int i = 0; i < READERS; i++) pthread_join(threads[i], NULL);
    ring_free(current);
    return swaps;
}

int main(int argc, char **argv) {
    const char *env = getenv("SHARDRING_STRESS_SECS");
    double seconds = argc > 2 ? atof(argv[2]) : env ? atof(env) : 10.0;
    const char *algorithms[] = {"ring", "ketama", "ketama-spy", "libketama", "nginx",
                                "jump", "rendezvous", "maglev", "slots"};
    enum { ALGORITHMS = sizeof algorithms / sizeof *algorithms };
    for (int k = 0; k < KEYS; k++) {
        key_lens[k] = (size_t)snprintf(keys[k], sizeof keys[k], "stress-key-%d", k);
        key_ptrs[k] = (const uint8_t *)keys[k];
    }
    for (int a = 0; a < ALGORITHMS; a++) {
        long before = atomic_load(&reads);
        long swaps = stress(algorithms[a], seconds / ALGORITHMS);
        long read = atomic_load(&reads) - before;
        CHECK(swaps >= 3 && read > 0, "%s: %ld swaps, %ld reads", algorithms[a], swaps, read);
        printf("C threads, %s: %ld snapshot reads (%d keys each) across %ld swaps\n", algorithms[a], read, KEYS, swaps);
    }
    CHECK(atomic_load(&bad) == 0, "%ld answers differ from their snapshot's", atomic_load(&bad));
    return CHECK_SUMMARY("C threads");
}
