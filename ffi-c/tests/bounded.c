/* Bounded loads through the C ABI: capacities, spill order, release, swap,
 * errors, and threads acquiring and releasing at once. */
#include <math.h>
#include <pthread.h>
#include <stdint.h>
#include <string.h>

#include "check.h"
#include "ring.h"

static int last_error_has(const char *needle) { return strstr(ring_last_error(), needle) != NULL; }

static ring_tracker_t *shared;

static void *worker(void *arg) {
    int id = *(const int *)arg, failures = 0;
    char key[32];
    for (int i = 0; i < 2000; i++) {
        int len = snprintf(key, sizeof key, "t%d-%d", id, i % 50);
        size_t index, id_len;
        const char *node;
        if (ring_tracker_acquire(shared, (const uint8_t *)key, (size_t)len, &index, &node, &id_len, NULL) != RING_OK)
            failures++;
        else if (ring_tracker_release(shared, node, id_len) != RING_OK)
            failures++;
    }
    return (void *)(intptr_t)failures;
}

int main(void) {
    const char *ids[] = {"n0", "n1", "n2", "n3"};
    size_t lens[] = {2, 2, 2, 2};
    ring_t *ring = NULL;
    ring_tracker_t *tracker = NULL;
    CHECK(ring_new(ids, lens, NULL, NULL, NULL, 4, 160, 0, &ring) == RING_OK, "ring");

    CHECK(ring_tracker_new(ring, 0.0, &tracker) == RING_INVALID_EPSILON && tracker == NULL, "epsilon 0");
    CHECK(last_error_has("epsilon 0"), "names it: %s", ring_last_error());
    CHECK(ring_tracker_new(ring, NAN, &tracker) == RING_INVALID_EPSILON, "epsilon NaN");
    CHECK(ring_tracker_new(ring, -1.0, &tracker) == RING_INVALID_EPSILON, "epsilon -1");
    /* HAProxy's hash-balance-factor: an haproxy ring and a factor above 100. */
    CHECK(ring_tracker_new_haproxy(ring, 125, &tracker) == RING_INVALID_CONFIG && tracker == NULL, "not an haproxy ring");
    {
        const char *servers[] = {"a", "b", "off", "c"};
        size_t server_lens[] = {1, 1, 3, 1};
        double server_weights[] = {1, 2, 0, 1};
        ring_options_t haproxy_options = {0};
        haproxy_options.algorithm = "haproxy";
        ring_t *haproxy = NULL;
        CHECK(ring_new_with_options_sized(servers, server_lens, server_weights, NULL, NULL, 4, &haproxy_options,
                                          sizeof haproxy_options, &haproxy) == RING_OK,
              "haproxy ring");
        ring_tracker_t *bounded = NULL;
        CHECK(ring_tracker_new_haproxy(haproxy, 100, &bounded) == RING_INVALID_CONFIG && bounded == NULL, "factor 100");
        CHECK(ring_tracker_new_haproxy(haproxy, 125, NULL) == RING_NULL_ARGUMENT, "NULL out");
        CHECK(ring_tracker_new_haproxy(haproxy, 125, &bounded) == RING_OK && bounded != NULL, "factor 125");
        size_t placed[4] = {0, 0, 0, 0};
        for (int i = 0; i < 10; i++) {
            char key[16];
            int len = snprintf(key, sizeof key, "k%d", i);
            size_t index, id_len;
            const char *id;
            uint32_t probes;
            CHECK(ring_tracker_acquire(bounded, (const uint8_t *)key, (size_t)len, &index, &id, &id_len, &probes) == RING_OK,
                  "acquire %s", key);
            placed[index]++;
        }
        /* 9 in flight before the last: 13 slots over weights 16, 32, 0, 16 (3, 6, 0, 4). */
        CHECK(placed[2] == 0 && placed[0] <= 4 && placed[1] <= 7 && placed[3] <= 5, "loads within HAProxy's slots");
        ring_tracker_free(bounded);
        ring_free(haproxy);
    }
    CHECK(ring_tracker_new(NULL, 0.25, &tracker) == RING_NULL_ARGUMENT, "NULL ring");
    CHECK(ring_tracker_new(ring, 0.25, &tracker) == RING_OK, "tracker");

    /* One hot key: requests spill along its preference list, none above
     * ceil(1.25 * 100 / 4) = 32. */
    size_t order[4], found = 0;
    CHECK(ring_get_nodes(ring, (const uint8_t *)"hot", 3, order, 4, &found) == RING_OK && found == 4, "order");
    size_t first_index = 99;
    uint32_t probes = 0, max_probes = 0;
    for (int i = 0; i < 100; i++) {
        size_t index;
        CHECK(ring_tracker_acquire(tracker, (const uint8_t *)"hot", 3, &index, NULL, NULL, &probes) == RING_OK, "acquire");
        if (i == 0) first_index = index;
        if (probes > max_probes) max_probes = probes;
    }
    CHECK(first_index == order[0], "the first request goes to the key's owner");
    CHECK(max_probes == 4, "the last requests probe all 4 nodes (%u)", max_probes);
    uint64_t load, sum = 0;
    for (size_t i = 0; i < 4; i++) {
        CHECK(ring_tracker_load(tracker, i, &load) == RING_OK && load <= 32, "node %zu load %llu", i,
              (unsigned long long)load);
        sum += load;
    }
    CHECK(sum == 100 && ring_tracker_total_load(tracker) == 100, "total 100");
    CHECK(ring_tracker_load(tracker, 4, &load) == RING_INDEX_OUT_OF_RANGE, "index 4");

    /* Release and its errors. */
    CHECK(ring_tracker_release(tracker, "n9", 2) == RING_UNKNOWN_NODE, "unknown node");
    CHECK(ring_tracker_release(tracker, "\xff", 1) == RING_INVALID_UTF8, "bad UTF-8");
    for (size_t i = 0; i < 4; i++) {
        const char *id;
        size_t id_len;
        CHECK(ring_node_id(ring, i, &id, &id_len) == RING_OK, "id");
        CHECK(ring_tracker_load(tracker, i, &load) == RING_OK, "load");
        for (uint64_t k = 0; k < load; k++) CHECK(ring_tracker_release(tracker, id, id_len) == RING_OK, "release");
        CHECK(ring_tracker_release(tracker, id, id_len) == RING_NO_LOAD, "release below 0");
    }
    CHECK(ring_tracker_total_load(tracker) == 0, "all released");

    /* Swap: loads carry over by id. */
    size_t index;
    const char *node;
    size_t node_len;
    CHECK(ring_tracker_acquire(tracker, (const uint8_t *)"k", 1, &index, &node, &node_len, NULL) == RING_OK, "acquire k");
    char held[8] = {0};
    memcpy(held, node, node_len);
    ring_t *grown = NULL;
    CHECK(ring_with_node(ring, "n4", 2, 1.0, NULL, 0, &grown) == RING_OK, "grown");
    CHECK(ring_tracker_swap(tracker, grown) == RING_OK, "swap");
    CHECK(ring_tracker_total_load(tracker) == 1, "load carried over");
    CHECK(ring_tracker_release(tracker, held, node_len) == RING_OK, "release after swap");

    /* Threads. */
    shared = tracker;
    pthread_t threads[4];
    int numbers[4] = {0, 1, 2, 3};
    for (int t = 0; t < 4; t++) pthread_create(&threads[t], NULL, worker, &numbers[t]);
    for (int t = 0; t < 4; t++) {
        void *failures;
        pthread_join(threads[t], &failures);
        CHECK(failures == NULL, "thread %d: %ld failures", t, (long)(intptr_t)failures);
    }
    CHECK(ring_tracker_total_load(tracker) == 0, "threads released everything");

    ring_tracker_free(tracker);
    ring_tracker_free(NULL);
    CHECK(ring_tracker_total_load(NULL) == 0, "NULL tracker");
    ring_free(grown);
    ring_free(ring);
    return CHECK_SUMMARY("C bounded loads");
}
