/* ring_transition_*: read and write sets while members warm up or drain,
 * the three rings, states, between, a file follower's transition, errors. */
#define _POSIX_C_SOURCE 200809L
#include <ring.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"

static const char *CONFIG =
    "{\"format_version\": 1, \"nodes\": [{\"id\": \"a\"}, {\"id\": \"b\"}, {\"id\": \"w\", \"state\": \"warming\"}, "
    "{\"id\": \"d\", \"state\": \"draining\"}]}";

static ring_t *ring_of(const char **ids, size_t n) {
    size_t lens[4];
    for (size_t i = 0; i < n; i++) lens[i] = strlen(ids[i]);
    ring_t *ring = NULL;
    ring_new(ids, lens, NULL, NULL, NULL, n, 160, 0, &ring);
    return ring;
}

static int owner_is(const ring_t *ring, const char *key, const char *id, size_t id_len) {
    size_t index, len;
    const char *got;
    if (ring_get_node(ring, (const uint8_t *)key, strlen(key), &index, &got, &len) != RING_OK) return 0;
    return len == id_len && memcmp(got, id, len) == 0;
}

int main(void) {
    ring_transition_t *t = NULL;
    CHECK(ring_transition_new_from_json(CONFIG, strlen(CONFIG), &t) == RING_OK, "%s", ring_last_error());
    const char *old_ids[] = {"a", "b", "d"}, *new_ids[] = {"a", "b", "w"};
    ring_t *old = ring_of(old_ids, 3), *new_ring = ring_of(new_ids, 3);
    ring_t *read = NULL;
    CHECK(ring_transition_ring(t, RING_TRANSITION_READ, &read) == RING_OK && ring_node_count(read) == 2, "read ring");
    int two_reads = 0, two_writes = 0;
    for (int i = 0; i < 3000; i++) {
        char key[32];
        snprintf(key, sizeof key, "key-%d", i);
        const char *ids[2];
        size_t lens[2], count = 0;
        CHECK(ring_transition_read_nodes(t, (const uint8_t *)key, strlen(key), ids, lens, 2, &count) == RING_OK, "reads");
        CHECK(owner_is(read, key, ids[0], lens[0]), "reads start at the active owner");
        if (count == 2) {
            two_reads++;
            CHECK(lens[1] == 1 && ids[1][0] == 'd' && owner_is(old, key, "d", 1), "fallback to the draining owner");
        }
        CHECK(ring_transition_write_nodes(t, (const uint8_t *)key, strlen(key), ids, lens, 2, &count) == RING_OK, "writes");
        CHECK(owner_is(read, key, ids[0], lens[0]), "writes start at the active owner");
        if (count == 2) {
            two_writes++;
            CHECK(lens[1] == 1 && ids[1][0] == 'w' && owner_is(new_ring, key, "w", 1), "and the warming owner");
        }
    }
    CHECK(two_reads > 500 && two_writes > 500, "%d reads and %d writes with two nodes", two_reads, two_writes);
    /* The route: the old ring's owner, the new ring's, and whether they differ. */
    int moving_keys = 0;
    for (int i = 0; i < 3000; i++) {
        char key[32];
        snprintf(key, sizeof key, "key-%d", i);
        const char *was = NULL, *will = NULL;
        size_t was_len = 0, will_len = 0;
        bool moving = true;
        CHECK(ring_transition_route(t, (const uint8_t *)key, strlen(key), &was, &was_len, &will, &will_len, &moving) == RING_OK,
              "route");
        CHECK(owner_is(old, key, was, was_len) && owner_is(new_ring, key, will, will_len), "old and new owners of %s", key);
        CHECK(moving == !(was_len == will_len && memcmp(was, will, was_len) == 0), "moving when they differ");
        moving_keys += moving;
    }
    CHECK(moving_keys > 900 && moving_keys < 2100, "%d of 3000 keys move (d leaves, w joins)", moving_keys);
    {
        const char *was, *will;
        size_t was_len, will_len;
        bool moving;
        CHECK(ring_transition_route(t, (const uint8_t *)"k", 1, &was, &was_len, &will, &will_len, NULL) == RING_NULL_ARGUMENT,
              "NULL out_moving");
        CHECK(ring_transition_route(NULL, (const uint8_t *)"k", 1, &was, &was_len, &will, &will_len, &moving) ==
                  RING_NULL_ARGUMENT,
              "NULL transition");
    }
    /* The mark: "shardring:handoff:" and the fingerprint in hex. */
    {
        char mark[RING_HANDOFF_MARK_LEN], hex[RING_FINGERPRINT_HEX_LEN], expected[64];
        CHECK(ring_transition_handoff_mark(t, mark, sizeof mark) == RING_OK, "mark");
        snprintf(hex, sizeof hex, "%016llx", (unsigned long long)ring_transition_fingerprint(t));
        snprintf(expected, sizeof expected, "shardring:handoff:%s", hex);
        CHECK(strcmp(mark, expected) == 0, "mark %s, expected %s", mark, expected);
        CHECK(ring_transition_handoff_mark(t, mark, RING_HANDOFF_MARK_LEN - 1) == RING_BUFFER_TOO_SMALL, "short buffer");
        CHECK(ring_transition_handoff_mark(t, NULL, sizeof mark) == RING_NULL_ARGUMENT, "NULL buffer");
    }
    /* The guard: its source names the moved reply, and its SHA-1 is 40 hex digits. */
    CHECK(strstr(ring_redis_guard(), "redis.error_reply('SHARDRING_MOVED')") != NULL, "the guard answers the moved reply");
    CHECK(strcmp(ring_redis_moved_reply(), "SHARDRING_MOVED") == 0, "moved reply");
    CHECK(strcmp(ring_redis_tryagain_reply(), "SHARDRING_TRYAGAIN") == 0, "try-again reply");
    CHECK(strstr(ring_redis_guard(), "redis.error_reply('SHARDRING_TRYAGAIN')") != NULL, "the guard answers the try-again reply");
    CHECK(strlen(ring_redis_guard_sha1()) == 40 && strspn(ring_redis_guard_sha1(), "0123456789abcdef") == 40, "sha1");
    uint32_t state = 99;
    CHECK(ring_transition_state(t, "w", 1, &state) == RING_OK && state == RING_STATE_WARMING, "warming");
    CHECK(ring_transition_state(t, "d", 1, &state) == RING_OK && state == RING_STATE_DRAINING, "draining");
    CHECK(ring_transition_state(t, "a", 1, &state) == RING_OK && state == RING_STATE_ACTIVE, "active");
    CHECK(ring_transition_state(t, "z", 1, &state) == RING_UNKNOWN_NODE, "unknown");
    ring_t *other = NULL;
    CHECK(ring_transition_ring(t, RING_TRANSITION_OLD, &other) == RING_OK && ring_fingerprint(other) == ring_fingerprint(old), "old ring");
    ring_free(other);
    CHECK(ring_transition_ring(t, RING_TRANSITION_NEW, &other) == RING_OK && ring_fingerprint(other) == ring_fingerprint(new_ring), "new ring");
    ring_free(other);
    CHECK(ring_transition_ring(t, 7, &other) == RING_INDEX_OUT_OF_RANGE, "which out of range");
    ring_transition_t *between = NULL;
    CHECK(ring_transition_between(old, new_ring, &between) == RING_OK, "between");
    CHECK(ring_transition_fingerprint(between) == ring_transition_fingerprint(t) && ring_transition_fingerprint(t) != 0,
          "between has the stated transition's fingerprint");
    const char *ids[2];
    size_t lens[2], count;
    CHECK(ring_transition_read_nodes(t, (const uint8_t *)"k", 1, ids, lens, 0, &count) == RING_BUFFER_TOO_SMALL, "capacity");
    CHECK(ring_transition_read_nodes(NULL, (const uint8_t *)"k", 1, ids, lens, 2, &count) == RING_NULL_ARGUMENT, "NULL");
    CHECK(ring_transition_write_nodes(t, (const uint8_t *)"k", 1, ids, lens, 2, NULL) == RING_NULL_ARGUMENT, "NULL out");
    CHECK(ring_transition_new_from_json("{", 1, &between) == RING_INVALID_CONFIG, "bad JSON");
    CHECK(ring_transition_fingerprint(NULL) == 0, "NULL fingerprint");
    /* A ring cannot be built from a config with states. */
    ring_t *refused = NULL;
    CHECK(ring_new_from_json(CONFIG, strlen(CONFIG), &refused) == RING_INVALID_CONFIG, "a ring refuses states");
    /* A file follower's transition. */
    char path[] = "/tmp/shardring-transition-XXXXXX";
    int fd = mkstemp(path);
    FILE *f = fdopen(fd, "w");
    fputs(CONFIG, f);
    fclose(f);
    ring_follower_t *follower = NULL;
    CHECK(ring_follower_new_file(path, strlen(path), 5000, NULL, NULL, &follower) == RING_OK, "%s", ring_last_error());
    ring_transition_t *followed = NULL;
    int64_t revision = 0;
    CHECK(ring_follower_transition(follower, &followed, &revision) == RING_OK && revision == 1, "follower transition");
    CHECK(ring_transition_fingerprint(followed) == ring_transition_fingerprint(t), "the file's transition");
    ring_transition_free(followed);
    ring_follower_free(follower);
    remove(path);
    ring_transition_free(between);
    ring_transition_free(t);
    ring_transition_free(NULL);
    ring_free(read);
    ring_free(old);
    ring_free(new_ring);
    return CHECK_SUMMARY("transition");
}
