/* Runs every case of testdata/vectors.json through the C ABI.
 * Usage: vectors PATH/TO/vectors.json */
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ring.h"
#include "check.h"

static size_t hex_decode(const char *hex, uint8_t *out) {
    size_t n = strlen(hex) / 2;
    for (size_t i = 0; i < n; i++) {
        unsigned byte;
        sscanf(hex + 2 * i, "%2x", &byte);
        out[i] = (uint8_t)byte;
    }
    return n;
}

/* Ids may hold NUL bytes, so compare with the JSON string's own length. */
static int id_equals(const ring_t *ring, size_t index, json_t *want) {
    const char *id;
    size_t len;
    if (ring_node_id(ring, index, &id, &len) != RING_OK) return 0;
    return len == json_string_length(want) && memcmp(id, json_string_value(want), len) == 0;
}

/* The config fields the options struct has a field for (or that are no
 * parameter); vectors.c sets each from the config by hand. */
static int is_field(const char *key) {
    static const char *const fields[] = {
        "format_version", "nodes",         "algorithm",     "vnodes",         "seed",
        "table_size",     "distribution",  "key_hash",      "server_ids",     "hash_tag",
        "default_port",   "min_ring_size", "max_ring_size", "hash_function",  "endpoint_order",
        "server_key",     "avalanche",     "score",         "removed_buckets",
    };
    for (size_t i = 0; i < sizeof fields / sizeof *fields; i++) {
        if (strcmp(key, fields[i]) == 0) return 1;
    }
    return 0;
}

static void run_case(json_t *c) {
    const char *name = json_string_value(json_object_get(c, "name"));
    json_t *config = json_object_get(c, "config");
    json_t *nodes = json_object_get(config, "nodes");
    size_t count = json_array_size(nodes);
    const char **ids = calloc(count + 1, sizeof *ids);
    const char **zones = calloc(count + 1, sizeof *zones);
    size_t *lens = calloc(count + 1, sizeof *lens);
    size_t *zone_lens = calloc(count + 1, sizeof *zone_lens);
    double *weights = calloc(count + 1, sizeof *weights);
    uint32_t *haproxy_ids = calloc(count + 1, sizeof *haproxy_ids);
    uint32_t *buckets = calloc(count + 1, sizeof *buckets);
    int listed_slots = 0, any_haproxy_id = 0, any_bucket = 0;
    for (size_t i = 0; i < count; i++) {
        json_t *node = json_array_get(nodes, i);
        ids[i] = json_string_value(json_object_get(node, "id"));
        lens[i] = json_string_length(json_object_get(node, "id"));
        weights[i] = json_number_value(json_object_get(node, "weight"));
        json_t *zone = json_object_get(node, "zone");
        zones[i] = zone ? json_string_value(zone) : NULL;
        zone_lens[i] = zone ? json_string_length(zone) : 0;
        /* Listed slots and nginx down marks exist only in configs. */
        listed_slots |= json_object_get(node, "slots") != NULL || json_object_get(node, "down") != NULL;
        json_t *puid = json_object_get(node, "haproxy_id");
        haproxy_ids[i] = puid ? (uint32_t)json_integer_value(puid) : 0;
        any_haproxy_id |= puid != NULL;
        json_t *bucket = json_object_get(node, "bucket");
        buckets[i] = bucket ? (uint32_t)json_integer_value(bucket) : 0;
        any_bucket |= bucket != NULL;
    }
    uint32_t vnodes = (uint32_t)json_integer_value(json_object_get(config, "vnodes"));
    uint64_t seed = (uint64_t)json_integer_value(json_object_get(config, "seed"));

    const char *algorithm = json_string_value(json_object_get(config, "algorithm"));
    ring_t *ring = NULL, *from_json = NULL;
    char *text = json_dumps(config, JSON_COMPACT);
    ring_result rc = ring_new_from_json(text, strlen(text), &from_json);
    CHECK(rc == RING_OK, "%s: ring_new_from_json -> %u (%s)", name, rc, ring_last_error());
    free(text);
    if (strcmp(algorithm, "ring") == 0) {
        rc = ring_new(ids, lens, weights, zones, zone_lens, count, vnodes, seed, &ring);
        CHECK(rc == RING_OK, "%s: ring_new -> %u (%s)", name, rc, ring_last_error());
    } else if (listed_slots) {
        /* Listed slot ranges exist only in configs. */
        ring = ring_clone(from_json);
    } else {
        /* The config's parameters are passed exactly when it gives them. */
        ring_options_t options = {0};
        options.algorithm = algorithm;
        json_t *table_size = json_object_get(config, "table_size");
        if (json_object_get(config, "seed")) {
            options.fields |= RING_OPTION_SEED;
            options.seed = seed;
        }
        if (json_object_get(config, "vnodes")) {
            options.fields |= RING_OPTION_VNODES;
            options.vnodes = vnodes;
        }
        if (table_size) {
            options.fields |= RING_OPTION_TABLE_SIZE;
            options.table_size = (uint32_t)json_integer_value(table_size);
        }
        json_t *distribution = json_object_get(config, "distribution");
        json_t *key_hash = json_object_get(config, "key_hash");
        if (distribution) {
            options.fields |= RING_OPTION_DISTRIBUTION;
            options.distribution = json_string_value(distribution);
        }
        if (key_hash) {
            options.fields |= RING_OPTION_KEY_HASH;
            options.key_hash = json_string_value(key_hash);
        }
        json_t *server_ids = json_object_get(config, "server_ids");
        json_t *hash_tag = json_object_get(config, "hash_tag");
        if (server_ids) {
            options.fields |= RING_OPTION_SERVER_IDS;
            options.server_ids = json_string_value(server_ids);
        }
        if (hash_tag) {
            options.fields |= RING_OPTION_HASH_TAG;
            options.hash_tag = json_string_value(hash_tag);
        }
        json_t *default_port = json_object_get(config, "default_port");
        if (default_port) {
            options.fields |= RING_OPTION_DEFAULT_PORT;
            options.default_port = (uint32_t)json_integer_value(default_port);
        }
        json_t *min_ring_size = json_object_get(config, "min_ring_size");
        json_t *max_ring_size = json_object_get(config, "max_ring_size");
        if (min_ring_size) {
            options.fields |= RING_OPTION_MIN_RING_SIZE;
            options.min_ring_size = (uint64_t)json_integer_value(min_ring_size);
        }
        if (max_ring_size) {
            options.fields |= RING_OPTION_MAX_RING_SIZE;
            options.max_ring_size = (uint64_t)json_integer_value(max_ring_size);
        }
        json_t *hash_function = json_object_get(config, "hash_function");
        json_t *endpoint_order = json_object_get(config, "endpoint_order");
        json_t *server_key = json_object_get(config, "server_key");
        json_t *avalanche = json_object_get(config, "avalanche");
        if (hash_function) {
            options.fields |= RING_OPTION_HASH_FUNCTION;
            options.hash_function = json_string_value(hash_function);
        }
        if (endpoint_order) {
            options.fields |= RING_OPTION_ENDPOINT_ORDER;
            options.endpoint_order = json_string_value(endpoint_order);
        }
        if (server_key) {
            options.fields |= RING_OPTION_SERVER_KEY;
            options.server_key = json_string_value(server_key);
        }
        if (avalanche) {
            options.fields |= RING_OPTION_AVALANCHE;
            options.avalanche = json_is_true(avalanche) ? 1 : 0;
        }
        json_t *score = json_object_get(config, "score");
        if (score) {
            options.fields |= RING_OPTION_SCORE;
            options.score = json_string_value(score);
        }
        if (any_haproxy_id) {
            options.fields |= RING_OPTION_HAPROXY_IDS;
            options.haproxy_ids = haproxy_ids;
        }
        /* A memento config writes every bucket or none, and its history when it has one. */
        if (any_bucket) {
            options.fields |= RING_OPTION_BUCKETS;
            options.buckets = buckets;
        }
        json_t *removed = json_object_get(config, "removed_buckets");
        uint32_t removed_buckets[64];
        if (removed) {
            size_t ri;
            json_t *bucket;
            CHECK(json_array_size(removed) <= 64, "%s: at most 64 removed buckets in a vector", name);
            json_array_foreach(removed, ri, bucket) {
                if (ri < 64) removed_buckets[ri] = (uint32_t)json_integer_value(bucket);
            }
            options.fields |= RING_OPTION_REMOVED_BUCKETS;
            options.removed_buckets = removed_buckets;
            options.removed_bucket_count = json_array_size(removed) <= 64 ? json_array_size(removed) : 64;
        }
        /* A parameter without a field of its own goes through `params`, so a
         * new one needs no line here. */
        json_t *rest = json_object();
        const char *key;
        json_t *value;
        json_object_foreach(config, key, value) {
            if (!is_field(key)) json_object_set(rest, key, value);
        }
        char *rest_text = json_dumps(rest, JSON_COMPACT);
        if (json_object_size(rest) > 0) {
            options.fields |= RING_OPTION_PARAMS;
            options.params = rest_text;
        }
        rc = ring_new_with_options_sized(ids, lens, weights, zones, zone_lens, count, &options, sizeof options, &ring);
        CHECK(rc == RING_OK, "%s: ring_new_with_options_sized -> %u (%s)", name, rc, ring_last_error());
        free(rest_text);
        json_decref(rest);
    }
    if (!listed_slots) {
        /* Every parameter, the algorithm included, through `params` alone
         * (the per-node arrays aside): the same ring. */
        json_t *all = json_deep_copy(config);
        json_object_del(all, "nodes");
        json_object_del(all, "format_version");
        char *all_text = json_dumps(all, JSON_COMPACT);
        ring_options_t by_name = {0};
        by_name.fields = RING_OPTION_PARAMS;
        by_name.params = all_text;
        if (any_haproxy_id) {
            by_name.fields |= RING_OPTION_HAPROXY_IDS;
            by_name.haproxy_ids = haproxy_ids;
        }
        if (any_bucket) {
            by_name.fields |= RING_OPTION_BUCKETS;
            by_name.buckets = buckets;
        }
        ring_t *named = NULL;
        rc = ring_new_with_options_sized(ids, lens, weights, zones, zone_lens, count, &by_name, sizeof by_name, &named);
        CHECK(rc == RING_OK && ring && ring_fingerprint(named) == ring_fingerprint(ring),
              "%s: every parameter through options.params -> %u (%s)", name, rc, rc ? ring_last_error() : "");
        ring_free(named);
        free(all_text);
        json_decref(all);
    }
    if (!ring || !from_json) goto done;
    CHECK(strcmp(ring_algorithm(ring), algorithm) == 0, "%s: ring_algorithm", name);
    uint64_t fingerprint = strtoull(json_string_value(json_object_get(c, "fingerprint")), NULL, 16);
    CHECK(ring_fingerprint(ring) == fingerprint && ring_fingerprint(from_json) == fingerprint, "%s: fingerprint", name);
    /* The text every binding prints: the vector's 16 lowercase hex digits, zero-padded. */
    char hex[RING_FINGERPRINT_HEX_LEN];
    CHECK(ring_fingerprint_hex(ring, hex, sizeof hex) == RING_OK &&
              strcmp(hex, json_string_value(json_object_get(c, "fingerprint"))) == 0,
          "%s: fingerprint text %s", name, hex);

    size_t hi;
    json_t *by_hash;
    json_array_foreach(json_object_get(c, "hash_lookups"), hi, by_hash) {
        uint64_t hash = strtoull(json_string_value(json_object_get(by_hash, "hash")), NULL, 16);
        size_t index = (size_t)-1;
        CHECK(ring_get_node_by_hash(ring, hash, &index) == RING_OK &&
                  id_equals(ring, index, json_object_get(by_hash, "owner")),
              "%s: owner of hash %016llx", name, (unsigned long long)hash);
    }

    size_t li;
    json_t *lookup;
    json_array_foreach(json_object_get(c, "lookups"), li, lookup) {
        uint8_t key[1024];
        size_t key_len = hex_decode(json_string_value(json_object_get(lookup, "key_hex")), key);
        uint64_t want_hash = strtoull(json_string_value(json_object_get(lookup, "key_hash")), NULL, 16);
        CHECK(ring_hash_key(ring, key, key_len) == want_hash, "%s: key %zu hash", name, li);

        json_t *owner = json_object_get(lookup, "owner");
        size_t index = (size_t)-1, index_json = (size_t)-2;
        const char *id = NULL;
        size_t id_len = 0;
        CHECK(ring_get_node(ring, key, key_len, &index, &id, &id_len) == RING_OK && id_equals(ring, index, owner) &&
                  id_len == json_string_length(owner) && memcmp(id, json_string_value(owner), id_len) == 0,
              "%s: key %zu owner, want %s", name, li, json_string_value(owner));
        CHECK(ring_get_node(from_json, key, key_len, &index_json, NULL, NULL) == RING_OK && index_json == index,
              "%s: key %zu owner from JSON config", name, li);
        size_t batch_index = (size_t)-3;
        const uint8_t *batch_key = key;
        CHECK(ring_get_node_batch(ring, &batch_key, &key_len, 1, &batch_index, 1) == RING_OK && batch_index == index,
              "%s: key %zu owner from the batch call", name, li);

        json_t *want = json_object_get(lookup, "preference");
        size_t n = (size_t)json_integer_value(json_object_get(lookup, "n"));
        size_t out[1024], got = 0;
        rc = ring_get_nodes(ring, key, key_len, out, n, &got);
        int same = rc == RING_OK && got == json_array_size(want);
        for (size_t k = 0; same && k < got; k++)
            same = id_equals(ring, out[k], json_array_get(want, k));
        CHECK(same, "%s: key %zu preference list (n=%zu, got %zu)", name, li, n, got);
    }
done:
    ring_free(from_json);
    ring_free(ring);
    free(ids);
    free(zones);
    free(zone_lens);
    free(lens);
    free(weights);
    free(haproxy_ids);
    free(buckets);
}

int main(int argc, char **argv) {
    if (argc != 2) {
        fprintf(stderr, "usage: %s testdata/vectors.json\n", argv[0]);
        return 2;
    }
    json_error_t error;
    json_t *vectors = json_load_file(argv[1], JSON_ALLOW_NUL, &error);
    if (!vectors) {
        fprintf(stderr, "%s:%d: %s\n", argv[1], error.line, error.text);
        return 2;
    }
    CHECK(json_integer_value(json_object_get(vectors, "format_version")) == 1, "format_version");
    size_t i, cases = json_array_size(json_object_get(vectors, "cases"));
    json_t *c;
    json_array_foreach(json_object_get(vectors, "cases"), i, c) run_case(c);
    json_decref(vectors);
    printf("C vectors: %zu cases\n", cases);
    return CHECK_SUMMARY("C vectors");
}
