/* Hot keys from C: the sketch on a watched ring (every lookup by key seen,
 * lookups by hash not), the hot set's plan of a spread key, a key being
 * written and a cold key, a follower's plan, the near cache, and errors. */
#define _POSIX_C_SOURCE 200809L
#include <ring.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "check.h"

static ring_t *four_nodes(void) {
    const char *ids[] = {"a", "b", "c", "d"};
    size_t lens[] = {1, 1, 1, 1};
    ring_t *ring = NULL;
    ring_new(ids, lens, NULL, NULL, NULL, 4, 160, 0, &ring);
    return ring;
}

static void sketch_on_a_watched_ring(const ring_t *ring) {
    ring_hot_keys_t *hot = NULL;
    CHECK(ring_hot_keys_new(RING_HOT_KEYS_TOP, RING_HOT_KEYS_WIDTH, 1, RING_HOT_KEYS_HALF_LIFE_MS, &hot) == RING_OK,
          "%s", ring_last_error());
    ring_t *watched = NULL;
    CHECK(ring_watch_hot_keys(ring, hot, &watched) == RING_OK, "%s", ring_last_error());
    /* "hot" is 1 lookup in 10 through ring_get_node, "list" 1 in 20 through
     * ring_get_nodes, "batch" 300 times in batches; "by-hash" 2,000 times by
     * hash, which the sketch does not see. */
    int same_owner = 1;
    for (int i = 0; i < 10000; i++) {
        char key[32];
        if (i % 10 == 0) {
            strcpy(key, "hot");
        } else {
            snprintf(key, sizeof key, "key-%d", i);
        }
        size_t got = 0, want = 1;
        ring_get_node(watched, (const uint8_t *)key, strlen(key), &got, NULL, NULL);
        ring_get_node(ring, (const uint8_t *)key, strlen(key), &want, NULL, NULL);
        same_owner &= got == want;
        if (i % 20 == 1) {
            size_t indices[2], count = 0;
            ring_get_nodes(watched, (const uint8_t *)"list", 4, indices, 2, &count);
        }
        if (i % 5 == 0) {
            size_t index = 0;
            ring_get_node_by_hash(watched, ring_hash_key(watched, (const uint8_t *)"by-hash", 7), &index);
        }
    }
    CHECK(same_owner, "a watched ring places as the ring it watches");
    const uint8_t *batch_keys[50];
    size_t batch_lens[50], batch_out[50];
    for (int i = 0; i < 50; i++) batch_keys[i] = (const uint8_t *)"batch", batch_lens[i] = 5;
    for (int i = 0; i < 6; i++) ring_get_node_batch(watched, batch_keys, batch_lens, 50, batch_out, 50);
    CHECK(ring_hot_keys_observe(hot, (const uint8_t *)"direct", 6) == RING_OK, "observe");

    ring_hot_top_t *top = NULL;
    CHECK(ring_hot_keys_top(hot, &top) == RING_OK, "%s", ring_last_error());
    size_t n = ring_hot_top_count(top);
    CHECK(n >= 3, "%zu hot keys", n);
    const char *want[] = {"hot", "list", "batch"};
    uint64_t want_min[] = {950, 450, 270};
    for (size_t i = 0; i < 3 && i < n; i++) {
        const uint8_t *key = NULL;
        size_t len = 0;
        uint64_t requests = 0;
        double rate = -1;
        CHECK(ring_hot_top_key(top, i, &key, &len, &requests, &rate) == RING_OK, "%s", ring_last_error());
        CHECK(len == strlen(want[i]) && memcmp(key, want[i], len) == 0, "top %zu is %s: %.*s", i, want[i], (int)len,
              (const char *)key);
        CHECK(requests >= want_min[i] && requests <= 2 * want_min[i], "%s: %llu requests", want[i],
              (unsigned long long)requests);
        CHECK(rate > 0, "%s: rate %f", want[i], rate);
    }
    for (size_t i = 0; i < n; i++) {
        const uint8_t *key = NULL;
        size_t len = 0;
        uint64_t requests = 0;
        double rate = 0;
        ring_hot_top_key(top, i, &key, &len, &requests, &rate);
        CHECK(!(len == 7 && memcmp(key, "by-hash", 7) == 0), "a lookup by hash is not observed");
    }
    const uint8_t *key;
    size_t len;
    uint64_t requests;
    double rate;
    CHECK(ring_hot_top_key(top, n, &key, &len, &requests, &rate) == RING_INDEX_OUT_OF_RANGE, "index past the top");
    CHECK(ring_hot_top_key(NULL, 0, &key, &len, &requests, &rate) == RING_NULL_ARGUMENT, "NULL top");
    CHECK(ring_hot_top_count(NULL) == 0, "NULL top has no keys");
    ring_hot_top_free(top);
    ring_hot_top_free(NULL);
    ring_free(watched);
    /* The watched ring is gone; the sketch still counts. */
    CHECK(ring_hot_keys_observe(NULL, (const uint8_t *)"k", 1) == RING_NULL_ARGUMENT, "NULL sketch");
    CHECK(ring_watch_hot_keys(ring, NULL, &watched) == RING_NULL_ARGUMENT, "NULL sketch");
    CHECK(ring_watch_hot_keys(ring, hot, NULL) == RING_NULL_ARGUMENT, "NULL out");
    ring_hot_keys_free(hot);
    ring_hot_keys_free(NULL);

    CHECK(ring_hot_keys_new(100, 100, 4, 60000, &hot) == RING_INVALID_CONFIG, "width 100");
    CHECK(strstr(ring_last_error(), "width 100") != NULL, "names it: %s", ring_last_error());
    CHECK(ring_hot_keys_new(100, 4096, 3, 60000, &hot) == RING_INVALID_CONFIG, "sample 3");
    CHECK(strstr(ring_last_error(), "sample 3") != NULL, "names it: %s", ring_last_error());
    CHECK(ring_hot_keys_new(0, 4096, 4, 60000, &hot) == RING_INVALID_CONFIG, "top 0");
    CHECK(ring_hot_keys_new(100, 4096, 4, 0, &hot) == RING_INVALID_CONFIG, "half-life 0");
    CHECK(ring_hot_keys_new(100, 4096, 4, 60000, NULL) == RING_NULL_ARGUMENT, "NULL out");
}

static void hot_set_plans(const ring_t *ring) {
    const char *json =
        "{\"epoch\": 3, \"keys\": [{\"key\": \"hot\", \"replicas\": 3, \"phase\": \"spread\", \"generation\": 7, "
        "\"rate\": 1200.0}, {\"key\": \"new\", \"replicas\": 2, \"phase\": \"writing\", \"generation\": 8, \"rate\": 900.0}]}";
    ring_hot_set_t *set = NULL;
    CHECK(ring_hot_set_new_from_json(json, strlen(json), &set) == RING_OK, "%s", ring_last_error());
    CHECK(ring_hot_set_epoch(set) == 3, "epoch");
    size_t prefs[3] = {0}, count = 0;
    CHECK(ring_get_nodes(ring, (const uint8_t *)"hot", 3, prefs, 3, &count) == RING_OK && count == 3, "preferences");
    int seen[3] = {0};
    for (int i = 0; i < 30; i++) {
        ring_spread_plan_t plan;
        memset(&plan, 0xff, sizeof plan);
        CHECK(ring_hot_set_plan(set, ring, (const uint8_t *)"hot", 3, &plan) == RING_OK, "%s", ring_last_error());
        CHECK(plan.owner == prefs[0] && plan.copy_count == 2 && plan.copies[0] == prefs[1] && plan.copies[1] == prefs[2],
              "owner and copies are the preference list");
        CHECK(plan.copy_suffix_len == 5 && strcmp((const char *)plan.copy_suffix, "#hot7") == 0, "copy suffix %s",
              plan.copy_suffix);
        for (int r = 0; r < 3; r++) {
            if (plan.read == prefs[r]) seen[r]++;
        }
        CHECK(plan.read_copy == (plan.read != plan.owner), "a copy is read off the owner");
    }
    CHECK(seen[0] == 10 && seen[1] == 10 && seen[2] == 10, "reads round robin: %d %d %d", seen[0], seen[1], seen[2]);

    ring_spread_plan_t plan;
    size_t owner = 0;
    ring_get_node(ring, (const uint8_t *)"new", 3, &owner, NULL, NULL);
    CHECK(ring_hot_set_plan(set, ring, (const uint8_t *)"new", 3, &plan) == RING_OK, "%s", ring_last_error());
    CHECK(plan.read == owner && !plan.read_copy && plan.copy_count == 1, "a key being written is read from its owner");
    CHECK(strcmp((const char *)plan.copy_suffix, "#hot8") == 0, "and written to its copy: %s", plan.copy_suffix);
    ring_get_node(ring, (const uint8_t *)"cold", 4, &owner, NULL, NULL);
    CHECK(ring_hot_set_plan(set, ring, (const uint8_t *)"cold", 4, &plan) == RING_OK, "%s", ring_last_error());
    CHECK(plan.read == owner && plan.owner == owner && !plan.read_copy && plan.copy_count == 0 &&
              plan.copy_suffix_len == 0 && plan.copy_suffix[0] == 0,
          "a cold key is its owner's alone");
    CHECK(ring_hot_set_plan(NULL, ring, (const uint8_t *)"k", 1, &plan) == RING_NULL_ARGUMENT, "NULL set");
    CHECK(ring_hot_set_plan(set, NULL, (const uint8_t *)"k", 1, &plan) == RING_NULL_ARGUMENT, "NULL ring");
    CHECK(ring_hot_set_plan(set, ring, (const uint8_t *)"k", 1, NULL) == RING_NULL_ARGUMENT, "NULL plan");
    ring_hot_set_free(set);
    ring_hot_set_free(NULL);
    CHECK(ring_hot_set_epoch(NULL) == 0, "NULL set's epoch");

    const char *bad[] = {
        "{\"epoch\": 1, \"keys\": [{\"key\": \"k\", \"replicas\": 1, \"phase\": \"spread\", \"generation\": 1, "
        "\"rate\": 1.0}]}",
        "{\"epoch\": 1, \"keys\": [], \"extra\": 1}",
        "{\"epoch\": 1, \"keys\": [{\"key\": \"k\", \"replicas\": 2, \"phase\": \"hot\", \"generation\": 1, "
        "\"rate\": 1.0}]}",
    };
    const char *named[] = {"replicas 1", "extra", "hot"};
    for (int i = 0; i < 3; i++) {
        set = NULL;
        CHECK(ring_hot_set_new_from_json(bad[i], strlen(bad[i]), &set) == RING_INVALID_CONFIG && set == NULL,
              "bad set %d", i);
        CHECK(strstr(ring_last_error(), named[i]) != NULL, "names %s: %s", named[i], ring_last_error());
    }
    CHECK(ring_hot_set_new_from_json("\xff", 1, &set) == RING_INVALID_UTF8, "not UTF-8");
    CHECK(ring_hot_set_new_from_json("{}", 2, NULL) == RING_NULL_ARGUMENT, "NULL out");
}

static void follower_plan(void) {
    char dir[] = "/tmp/ring-hot-XXXXXX";
    CHECK(mkdtemp(dir) != NULL, "mkdtemp");
    char path[128];
    snprintf(path, sizeof path, "%s/ring.json", dir);
    FILE *file = fopen(path, "w");
    fputs("{\"format_version\": 1, \"nodes\": [{\"id\": \"a\"}, {\"id\": \"b\"}, {\"id\": \"c\"}]}", file);
    fclose(file);
    ring_follower_t *follower = NULL;
    CHECK(ring_follower_new_file(path, strlen(path), 5000, NULL, NULL, &follower) == RING_OK, "%s", ring_last_error());
    ring_spread_plan_t plan;
    ring_t *ring = NULL;
    CHECK(ring_follower_plan(follower, (const uint8_t *)"user:42", 7, &plan, &ring) == RING_OK, "%s", ring_last_error());
    size_t owner = 99;
    ring_get_node(ring, (const uint8_t *)"user:42", 7, &owner, NULL, NULL);
    CHECK(ring_node_count(ring) == 3 && plan.owner == owner && plan.read == owner && plan.copy_count == 0,
          "a file follower has no hot set: the owner alone");
    CHECK(ring_follower_plan(follower, (const uint8_t *)"user:42", 7, &plan, NULL) == RING_OK, "without the ring");
    CHECK(ring_follower_plan(NULL, (const uint8_t *)"k", 1, &plan, NULL) == RING_NULL_ARGUMENT, "NULL follower");
    /* A near cache the follower reports: its counts in the metrics. */
    ring_near_cache_t *cache = NULL;
    ring_near_cache_new(16, 60000, &cache);
    CHECK(ring_follower_report_near_cache(follower, cache) == RING_OK, "%s", ring_last_error());
    ring_near_cache_free(cache); /* the follower keeps it */
    char *text = NULL;
    size_t text_len = 0;
    CHECK(ring_follower_metrics(follower, &text, &text_len) == RING_OK, "%s", ring_last_error());
    CHECK(strstr(text, "shardring_near_cache_misses_total 0\n") != NULL &&
              strstr(text, "shardring_near_cache_capacity 16.0\n") != NULL,
          "the near cache in the metrics");
    ring_string_free(text);
    CHECK(ring_follower_report_near_cache(follower, NULL) == RING_NULL_ARGUMENT, "NULL cache");
    CHECK(ring_follower_report_near_cache(NULL, NULL) == RING_NULL_ARGUMENT, "NULL follower");
    CHECK(ring_follower_plan(follower, (const uint8_t *)"k", 1, NULL, NULL) == RING_NULL_ARGUMENT, "NULL plan");
    ring_free(ring);
    ring_follower_free(follower);
    unlink(path);
    rmdir(dir);
}

static void near_cache(void) {
    CHECK(ring_near_cache_default_capacity(12) == 44 && ring_near_cache_default_capacity(100) == 665 &&
              ring_near_cache_default_capacity(2) == 16,
          "n log2 n, at least 16");
    ring_near_cache_t *cache = NULL;
    CHECK(ring_near_cache_new(2, 60000, &cache) == RING_OK, "%s", ring_last_error());
    CHECK(ring_near_cache_put(cache, (const uint8_t *)"k1", 2, (const uint8_t *)"value-1", 7) == RING_OK, "put");
    uint8_t buf[16];
    size_t len = 99;
    bool found = false;
    CHECK(ring_near_cache_get(cache, (const uint8_t *)"k1", 2, buf, sizeof buf, &len, &found) == RING_OK && found &&
              len == 7 && memcmp(buf, "value-1", 7) == 0,
          "a hit");
    CHECK(ring_near_cache_get(cache, (const uint8_t *)"k1", 2, buf, 3, &len, &found) == RING_BUFFER_TOO_SMALL &&
              len == 7 && found,
          "a buffer too small gives the length");
    CHECK(ring_near_cache_get(cache, (const uint8_t *)"nope", 4, buf, sizeof buf, &len, &found) == RING_OK && !found &&
              len == 0,
          "a miss");
    ring_near_cache_put(cache, (const uint8_t *)"k2", 2, (const uint8_t *)"v2", 2);
    ring_near_cache_put(cache, (const uint8_t *)"k3", 2, (const uint8_t *)"v3", 2);
    uint64_t hits = 0, misses = 0;
    size_t entries = 0;
    CHECK(ring_near_cache_stats(cache, &hits, &misses, &entries) == RING_OK && hits == 2 && misses == 1 && entries == 2,
          "stats: %llu hits, %llu misses, %zu entries (capacity 2)", (unsigned long long)hits,
          (unsigned long long)misses, entries);
    ring_near_cache_get(cache, (const uint8_t *)"k1", 2, buf, sizeof buf, &len, &found);
    CHECK(!found, "the entry expiring first was evicted");
    CHECK(ring_near_cache_remove(cache, (const uint8_t *)"k3", 2) == RING_OK, "remove");
    ring_near_cache_get(cache, (const uint8_t *)"k3", 2, buf, sizeof buf, &len, &found);
    CHECK(!found, "removed");
    CHECK(ring_near_cache_stats(cache, NULL, NULL, NULL) == RING_OK, "every out NULL");
    ring_near_cache_free(cache);

    CHECK(ring_near_cache_new(8, 30, &cache) == RING_OK, "%s", ring_last_error());
    ring_near_cache_put(cache, (const uint8_t *)"k", 1, (const uint8_t *)"v", 1);
    struct timespec pause = {0, 100 * 1000 * 1000};
    nanosleep(&pause, NULL);
    ring_near_cache_get(cache, (const uint8_t *)"k", 1, buf, sizeof buf, &len, &found);
    CHECK(!found, "expired after its TTL");
    ring_near_cache_free(cache);
    ring_near_cache_free(NULL);

    CHECK(ring_near_cache_new(0, 1000, &cache) == RING_INVALID_CONFIG, "capacity 0");
    CHECK(strstr(ring_last_error(), "capacity 0") != NULL, "names it: %s", ring_last_error());
    CHECK(ring_near_cache_new(8, 0, &cache) == RING_INVALID_CONFIG, "ttl 0");
    CHECK(ring_near_cache_new(8, 1000, NULL) == RING_NULL_ARGUMENT, "NULL out");
    CHECK(ring_near_cache_put(NULL, (const uint8_t *)"k", 1, (const uint8_t *)"v", 1) == RING_NULL_ARGUMENT, "NULL");
    CHECK(ring_near_cache_get(NULL, (const uint8_t *)"k", 1, buf, 1, &len, &found) == RING_NULL_ARGUMENT, "NULL");
    CHECK(ring_near_cache_remove(NULL, (const uint8_t *)"k", 1) == RING_NULL_ARGUMENT, "NULL");
    CHECK(ring_near_cache_stats(NULL, NULL, NULL, NULL) == RING_NULL_ARGUMENT, "NULL");
}

int main(void) {
    ring_t *ring = four_nodes();
    sketch_on_a_watched_ring(ring);
    hot_set_plans(ring);
    ring_free(ring);
    follower_plan();
    near_cache();
    return CHECK_SUMMARY("hot");
}
