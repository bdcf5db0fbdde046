/* Times ring_get_node and ring_get_node_batch from C on 100 nodes x 160
 * vnodes over 1,000,000 distinct 30-byte keys: median of 7 passes, ns per
 * key. ffi-c/examples/rust_get.rs runs the same loop on the Rust API. */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "ring.h"

enum { NODES = 100, KEYS = 1000000, KEY_LEN = 30, PASSES = 7 };

static double now(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec * 1e9 + (double)t.tv_nsec;
}

static int by_value(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

int main(void) {
    char ids[NODES][40];
    const char *id_ptrs[NODES];
    size_t id_lens[NODES];
    for (int i = 0; i < NODES; i++) {
        id_lens[i] = (size_t)snprintf(ids[i], sizeof ids[i], "cache-%04d.example.internal", i);
        id_ptrs[i] = ids[i];
    }
    ring_t *ring;
    if (ring_new(id_ptrs, id_lens, NULL, NULL, NULL, NODES, 160, 0, &ring) != RING_OK) return 1;

    uint8_t *keys = malloc((size_t)KEYS * KEY_LEN);
    const uint8_t **key_ptrs = malloc(sizeof *key_ptrs * KEYS);
    size_t *key_lens = malloc(sizeof *key_lens * KEYS), *out = malloc(sizeof *out * KEYS);
    for (int i = 0; i < KEYS; i++) {
        char text[32];
        snprintf(text, sizeof text, "user:session:%011d", i);
        memset(keys + (size_t)i * KEY_LEN, 'x', KEY_LEN);
        memcpy(keys + (size_t)i * KEY_LEN, text, 24);
        key_ptrs[i] = keys + (size_t)i * KEY_LEN;
        key_lens[i] = KEY_LEN;
    }

    double single[PASSES], batch[PASSES], call[PASSES];
    size_t sink = 0;
    for (int p = 0; p < PASSES; p++) {
        double t0 = now();
        for (int i = 0; i < KEYS; i++) {
            size_t index;
            ring_get_node(ring, key_ptrs[i], KEY_LEN, &index, NULL, NULL);
            sink += index;
        }
        single[p] = (now() - t0) / KEYS;
        t0 = now();
        ring_get_node_batch(ring, key_ptrs, key_lens, KEYS, out, KEYS);
        batch[p] = (now() - t0) / KEYS;
        /* The floor under a call: the same loop calling the cheapest function. */
        t0 = now();
        for (int i = 0; i < KEYS; i++) sink += ring_node_count(ring);
        call[p] = (now() - t0) / KEYS;
        if (out[KEYS / 2] > NODES) return 1;
    }
    qsort(single, PASSES, sizeof *single, by_value);
    qsort(batch, PASSES, sizeof *batch, by_value);
    qsort(call, PASSES, sizeof *call, by_value);
    printf("C ring_get_node:       %6.1f ns per key (median of %d passes over %d keys)\n", single[PASSES / 2], PASSES, KEYS);
    printf("C ring_get_node_batch: %6.1f ns per key\n", batch[PASSES / 2]);
    printf("C ring_node_count:     %6.1f ns per call (the cost of any call into libring)\n", call[PASSES / 2]);
    fprintf(stderr, "(checksum %zu)\n", sink);
    free(keys);
    free(key_ptrs);
    free(key_lens);
    free(out);
    ring_free(ring);
    return 0;
}
