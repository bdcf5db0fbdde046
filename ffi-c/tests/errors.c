/* Every error a C caller can hit: the code, the detailed message, and that
 * outputs stay untouched on failure. */
#include <math.h>
#include <string.h>

#include "check.h"
#include <stdint.h>

#include "ring.h"

static int last_error_has(const char *needle) { return strstr(ring_last_error(), needle) != NULL; }

int main(void) {
    const char *ids[] = {"a", "b", "a"};
    size_t lens[] = {1, 1, 1};
    double weights[] = {1.0, NAN, 1.0};
    ring_t *ring = NULL;
    size_t index = 42, count = 42;

    /* Construction. */
    CHECK(ring_new(ids, lens, NULL, NULL, NULL, 2, 160, 0, NULL) == RING_NULL_ARGUMENT, "NULL out_ring");
    CHECK(last_error_has("out_ring"), "message names out_ring: %s", ring_last_error());
    CHECK(ring_new(NULL, lens, NULL, NULL, NULL, 2, 160, 0, &ring) == RING_NULL_ARGUMENT && ring == NULL, "NULL ids");
    /* A count no array holds is refused before anything is read or allocated. */
    CHECK(ring_new(ids, lens, NULL, NULL, NULL, SIZE_MAX, 160, 0, &ring) == RING_INVALID_CONFIG && ring == NULL,
          "SIZE_MAX nodes");
    CHECK(last_error_has("node_count"), "message names node_count: %s", ring_last_error());
    CHECK(ring_new(ids, lens, weights, NULL, NULL, 2, 160, 0, &ring) == RING_INVALID_WEIGHT && ring == NULL, "NaN");
    CHECK(last_error_has("NaN") && last_error_has("\"b\""), "names NaN and b: %s", ring_last_error());
    double negative[] = {-1.0}, infinite[] = {INFINITY}, huge[] = {1e18};
    CHECK(ring_new(ids, lens, negative, NULL, NULL, 1, 160, 0, &ring) == RING_INVALID_WEIGHT, "negative weight");
    CHECK(ring_new(ids, lens, infinite, NULL, NULL, 1, 160, 0, &ring) == RING_INVALID_WEIGHT, "infinite weight");
    CHECK(ring_new(ids, lens, huge, NULL, NULL, 1, 160, 0, &ring) == RING_TOO_MANY_POINTS, "weight 1e18");
    CHECK(last_error_has("16777216"), "names the limit: %s", ring_last_error());
    CHECK(ring_new(ids, lens, NULL, NULL, NULL, 1, 4000000000u, 0, &ring) == RING_TOO_MANY_POINTS, "huge vnodes");
    CHECK(ring_new(ids, lens, NULL, NULL, NULL, 3, 160, 0, &ring) == RING_DUPLICATE_ID, "duplicate id");
    CHECK(ring_new(ids, lens, NULL, NULL, NULL, 2, 0, 0, &ring) == RING_ZERO_VNODES, "vnodes 0");
    size_t empty_len[] = {0};
    CHECK(ring_new(ids, empty_len, NULL, NULL, NULL, 1, 160, 0, &ring) == RING_EMPTY_ID, "empty id");
    const char *bad_utf8[] = {"\xff\xfe"};
    size_t bad_len[] = {2};
    CHECK(ring_new(bad_utf8, bad_len, NULL, NULL, NULL, 1, 160, 0, &ring) == RING_INVALID_UTF8, "non-UTF-8 id");
    CHECK(last_error_has("ids[0]"), "names the id's position: %s", ring_last_error());
    const char *zones[] = {"east", NULL};
    size_t zone_lens[] = {4, 0}, empty_zone_lens[] = {0, 0};
    CHECK(ring_new(ids, lens, NULL, zones, NULL, 2, 160, 0, &ring) == RING_NULL_ARGUMENT, "zones without lengths");
    CHECK(ring_new(ids, lens, NULL, zones, empty_zone_lens, 2, 160, 0, &ring) == RING_EMPTY_ZONE, "empty zone");
    const char *bad_json = "{\"format_version\":1,\"nodes\":[],\"colour\":1}";
    CHECK(ring_new_from_json(bad_json, strlen(bad_json), &ring) == RING_INVALID_CONFIG, "unknown JSON field");
    CHECK(last_error_has("colour"), "names the field: %s", ring_last_error());
    const char *future = "{\"format_version\":2,\"nodes\":[]}";
    CHECK(ring_new_from_json(future, strlen(future), &ring) == RING_UNSUPPORTED_FORMAT, "format 2");
    CHECK(ring_new_from_json("\xff", 1, &ring) == RING_INVALID_UTF8, "non-UTF-8 JSON");
    CHECK(ring_new_from_json(NULL, 3, &ring) == RING_NULL_ARGUMENT, "NULL JSON");

    /* Lookups on an empty ring leave outputs untouched. */
    CHECK(ring_new(ids, lens, NULL, NULL, NULL, 0, 160, 0, &ring) == RING_OK, "empty ring builds");
    CHECK(ring_get_node(ring, (const uint8_t *)"k", 1, &index, NULL, NULL) == RING_EMPTY_RING && index == 42,
          "empty ring lookup");
    CHECK(ring_get_nodes(ring, (const uint8_t *)"k", 1, &index, 1, &count) == RING_EMPTY_RING && count == 42,
          "empty ring preference list");
    CHECK(ring_get_node_by_hash(ring, 7, &index) == RING_EMPTY_RING && index == 42, "empty ring lookup by hash");
    const uint8_t *one_key = (const uint8_t *)"k";
    size_t one_len = 1;
    CHECK(ring_get_node_batch(ring, &one_key, &one_len, 1, &index, 1) == RING_EMPTY_RING && index == 42,
          "empty ring batch");
    ring_free(ring);

    /* NULLs, ranges and buffers on a live ring. */
    CHECK(ring_new(ids, lens, NULL, zones, zone_lens, 2, 160, 0, &ring) == RING_OK, "two-node ring");
    CHECK(ring_get_node(NULL, (const uint8_t *)"k", 1, &index, NULL, NULL) == RING_NULL_ARGUMENT, "NULL ring");
    CHECK(ring_get_node(ring, NULL, 5, &index, NULL, NULL) == RING_NULL_ARGUMENT, "NULL key with length");
    CHECK(ring_get_node(ring, NULL, 0, &index, NULL, NULL) == RING_OK && index < 2, "NULL key, length 0 = empty key");
    CHECK(ring_get_node(ring, (const uint8_t *)"k", 1, NULL, NULL, NULL) == RING_NULL_ARGUMENT, "NULL out_index");
    const char *id = NULL;
    size_t id_len = 0;
    CHECK(ring_node_id(ring, 2, &id, &id_len) == RING_INDEX_OUT_OF_RANGE && id == NULL, "node index out of range");
    CHECK(last_error_has("index 2"), "names the index: %s", ring_last_error());
    double weight = -7;
    CHECK(ring_node_weight(ring, 9, &weight) == RING_INDEX_OUT_OF_RANGE && weight == -7, "weight index");
    size_t out[2] = {42, 42};
    const uint8_t *batch[] = {(const uint8_t *)"x", NULL, (const uint8_t *)"z"};
    size_t batch_lens[] = {1, 3, 1};
    CHECK(ring_get_node_batch(ring, batch, batch_lens, 3, out, 2) == RING_BUFFER_TOO_SMALL, "batch output too short");
    CHECK(ring_get_node_batch(ring, batch, batch_lens, 2, out, 2) == RING_NULL_ARGUMENT && out[0] == 42,
          "NULL key in a batch writes nothing");
    CHECK(last_error_has("keys[1]"), "names the key's position: %s", ring_last_error());
    CHECK(ring_get_nodes(ring, (const uint8_t *)"k", 1, NULL, 3, &count) == RING_NULL_ARGUMENT, "NULL list buffer");
    CHECK(ring_get_nodes(ring, (const uint8_t *)"k", 1, NULL, 0, &count) == RING_OK && count == 0, "n = 0");
    double shares[1];
    CHECK(ring_ownership(ring, shares, 1) == RING_BUFFER_TOO_SMALL, "ownership buffer too short");

    /* Derivation errors. */
    ring_t *derived = NULL;
    CHECK(ring_with_node(ring, "a", 1, 1.0, NULL, 0, &derived) == RING_DUPLICATE_ID && derived == NULL, "add twice");
    CHECK(ring_with_node(ring, "c", 1, -2.0, NULL, 0, &derived) == RING_INVALID_WEIGHT, "add bad weight");
    CHECK(ring_without_node(ring, "zz", 2, &derived) == RING_UNKNOWN_NODE, "remove unknown");
    CHECK(last_error_has("\"zz\""), "names zz: %s", ring_last_error());
    CHECK(ring_with_weight(ring, "zz", 2, 1.0, &derived) == RING_UNKNOWN_NODE, "re-weight unknown");
    CHECK(ring_with_weight(ring, "a", 1, NAN, &derived) == RING_INVALID_WEIGHT, "re-weight NaN");
    CHECK(ring_with_node(ring, "c", 1, 1.0, "", 0, &derived) == RING_EMPTY_ZONE, "add with empty zone");

    /* Diffs. */
    ring_t *seeded = NULL, *empty = NULL;
    ring_diff_t *diff = NULL;
    CHECK(ring_new(ids, lens, NULL, NULL, NULL, 2, 160, 1, &seeded) == RING_OK, "seeded ring");
    CHECK(ring_diff(ring, seeded, &diff) == RING_SEED_MISMATCH && diff == NULL, "diff across seeds");
    CHECK(ring_new(ids, lens, NULL, NULL, NULL, 0, 160, 0, &empty) == RING_OK, "empty ring");
    CHECK(ring_diff(ring, empty, &diff) == RING_EMPTY_RING, "diff with an empty ring");
    CHECK(ring_diff(ring, NULL, &diff) == RING_NULL_ARGUMENT, "diff with NULL");
    CHECK(ring_diff(ring, ring, &diff) == RING_OK && ring_diff_arc_count(diff) == 0, "diff with itself");
    uint64_t start, end;
    const char *from, *to;
    size_t from_len, to_len;
    CHECK(ring_diff_arc(diff, 0, &start, &end, &from, &from_len, &to, &to_len) == RING_INDEX_OUT_OF_RANGE, "arc 0");
    ring_diff_free(diff);
    ring_diff_free(NULL);
    ring_free(empty);
    ring_free(seeded);

    /* Algorithms and their parameters. */
    ring_options_t options = {0};
    options.algorithm = "consistent";
    CHECK(ring_new_with_options(ids, lens, NULL, NULL, NULL, 2, &options, &ring) == RING_INVALID_CONFIG, "unknown");
    CHECK(last_error_has("\"consistent\"") && last_error_has("maglev"), "names it and the choices: %s", ring_last_error());
    options.algorithm = "maglev";
    options.fields = RING_OPTION_TABLE_SIZE;
    options.table_size = 65535;
    CHECK(ring_new_with_options(ids, lens, NULL, NULL, NULL, 2, &options, &ring) == RING_INVALID_TABLE_SIZE, "65535");
    CHECK(last_error_has("65535") && last_error_has("prime"), "names the size: %s", ring_last_error());
    options.algorithm = "ketama";
    options.fields = 0;
    const char *servers[] = {"10.0.0.1:99999"};
    size_t server_lens[] = {14};
    CHECK(ring_new_with_options(servers, server_lens, NULL, NULL, NULL, 1, &options, &ring) == RING_INVALID_ADDRESS,
          "port 99999");
    CHECK(last_error_has("99999"), "names the port: %s", ring_last_error());
    double half[] = {0.5};
    CHECK(ring_new_with_options(ids, lens, half, NULL, NULL, 1, &options, &ring) == RING_INVALID_WEIGHT, "ketama 0.5");
    CHECK(last_error_has("whole numbers"), "states the rule: %s", ring_last_error());
    options.fields = RING_OPTION_SEED;
    options.seed = 9;
    CHECK(ring_new_with_options(ids, lens, NULL, NULL, NULL, 1, &options, &ring) == RING_INVALID_CONFIG, "ketama seed");
    options.algorithm = "jump";
    options.fields = 0;
    double two[] = {1.0, 2.0};
    CHECK(ring_new_with_options(ids, lens, two, NULL, NULL, 2, &options, &ring) == RING_INVALID_WEIGHT, "jump weight 2");
    options.algorithm = "slots";
    ring_t *slots = NULL, *plain = NULL;
    CHECK(ring_new_with_options(ids, lens, NULL, NULL, NULL, 2, &options, &slots) == RING_OK, "slots ring");
    index = 42;
    CHECK(ring_get_node_by_hash(slots, 16384, &index) == RING_HASH_OUT_OF_RANGE && index == 42, "slot 16384");
    CHECK(ring_get_node_by_hash(slots, 16383, &index) == RING_OK && index == 1, "slot 16383 is the second node's");
    CHECK(strcmp(ring_algorithm(slots), "slots") == 0 && ring_algorithm(NULL) == NULL, "ring_algorithm");
    CHECK(ring_new_with_options(ids, lens, NULL, NULL, NULL, 2, NULL, &plain) == RING_OK, "NULL options");
    CHECK(strcmp(ring_algorithm(plain), "ring") == 0, "NULL options mean the ring algorithm");
    CHECK(ring_diff(plain, slots, &diff) == RING_ALGORITHM_MISMATCH, "diff across algorithms");
    CHECK(last_error_has("ring") && last_error_has("slots"), "names both: %s", ring_last_error());
    ring_free(slots);

    /* One rule for defaults: a parameter counts only when its bit is set in
     * `fields`; anything passed must be valid, and 0 is never a default. */
    ring_t *reference = NULL, *chosen = NULL;
    ring_options_t defaults = {0};
    defaults.vnodes = 7;      /* no bit: not read */
    defaults.seed = 99;       /* no bit: not read */
    defaults.table_size = 11; /* no bit: not read */
    CHECK(ring_new(ids, lens, NULL, NULL, NULL, 2, 160, 0, &reference) == RING_OK, "160 vnodes, seed 0");
    CHECK(ring_new_with_options(ids, lens, NULL, NULL, NULL, 2, &defaults, &chosen) == RING_OK, "zeroed fields");
    CHECK(ring_fingerprint(chosen) == ring_fingerprint(reference) && strcmp(ring_algorithm(chosen), "ring") == 0,
          "fields = 0 means the ring algorithm, 160 vnodes and seed 0, whatever the other members hold");
    ring_free(chosen);
    ring_free(reference);
    defaults.fields = RING_OPTION_VNODES | RING_OPTION_SEED;
    CHECK(ring_new(ids, lens, NULL, NULL, NULL, 2, 7, 99, &reference) == RING_OK, "7 vnodes, seed 99");
    CHECK(ring_new_with_options(ids, lens, NULL, NULL, NULL, 2, &defaults, &chosen) == RING_OK, "vnodes and seed bits");
    CHECK(ring_fingerprint(chosen) == ring_fingerprint(reference), "set bits pass vnodes 7 and seed 99 as given");
    CHECK(ring_fingerprint(chosen) != ring_fingerprint(plain), "and they are not the defaults");
    ring_free(chosen);
    ring_free(reference);
    chosen = NULL;
    defaults.fields = RING_OPTION_VNODES;
    defaults.vnodes = 0;
    CHECK(ring_new_with_options(ids, lens, NULL, NULL, NULL, 2, &defaults, &chosen) == RING_ZERO_VNODES && !chosen,
          "vnodes 0 with its bit set is RING_ZERO_VNODES, not the default");
    CHECK(last_error_has("got 0"), "names the 0: %s", ring_last_error());
    CHECK(ring_new(ids, lens, NULL, NULL, NULL, 2, 0, 0, &chosen) == RING_ZERO_VNODES && !chosen,
          "ring_new passes vnodes 0 as given");
    defaults.algorithm = "maglev";
    defaults.fields = RING_OPTION_TABLE_SIZE;
    defaults.table_size = 0;
    CHECK(ring_new_with_options(ids, lens, NULL, NULL, NULL, 2, &defaults, &chosen) == RING_INVALID_TABLE_SIZE &&
              !chosen,
          "table_size 0 with its bit set is RING_INVALID_TABLE_SIZE, not the default");
    CHECK(last_error_has("table size 0"), "names the size: %s", ring_last_error());
    defaults.fields = 0;
    const char *maglev_json = "{\"format_version\":1,\"algorithm\":\"maglev\",\"table_size\":65537,"
                              "\"nodes\":[{\"id\":\"a\"},{\"id\":\"b\"}]}";
    CHECK(ring_new_from_json(maglev_json, strlen(maglev_json), &reference) == RING_OK, "Maglev of 65,537");
    CHECK(ring_new_with_options(ids, lens, NULL, NULL, NULL, 2, &defaults, &chosen) == RING_OK &&
              ring_fingerprint(chosen) == ring_fingerprint(reference),
          "Maglev without the table-size bit has the default table of 65,537 (table_size member 0 not read)");
    ring_free(chosen);
    ring_free(reference);
    chosen = NULL;
    defaults.fields = RING_OPTION_VNODES;
    defaults.vnodes = 160;
    CHECK(ring_new_with_options(ids, lens, NULL, NULL, NULL, 2, &defaults, &chosen) == RING_INVALID_CONFIG && !chosen,
          "vnodes given to maglev, even the default value, is a parameter it does not take");
    CHECK(last_error_has("vnodes"), "names vnodes: %s", ring_last_error());
    defaults.algorithm = NULL;
    defaults.fields = RING_OPTION_VNODES | 0x40000u | 0x80000u;
    CHECK(ring_new_with_options(ids, lens, NULL, NULL, NULL, 2, &defaults, &chosen) == RING_INVALID_CONFIG && !chosen,
          "bits no RING_OPTION_* defines");
    CHECK(last_error_has("0xc0000"), "names the unknown bits: %s", ring_last_error());
    CHECK(RING_OPTION_VNODES == 1 && RING_OPTION_SEED == 2 && RING_OPTION_TABLE_SIZE == 4, "bit values are fixed");
    CHECK(RING_OPTION_DISTRIBUTION == 8 && RING_OPTION_KEY_HASH == 16 && RING_OPTION_SERVER_IDS == 32 &&
              RING_OPTION_HASH_TAG == 64 && RING_OPTION_DEFAULT_PORT == 128,
          "bit values are fixed");
    CHECK(RING_OPTION_MIN_RING_SIZE == 256 && RING_OPTION_MAX_RING_SIZE == 512 && RING_OPTION_HASH_FUNCTION == 1024 &&
              RING_OPTION_ENDPOINT_ORDER == 2048 && RING_OPTION_AVALANCHE == 4096 && RING_OPTION_SERVER_KEY == 8192 &&
              RING_OPTION_HAPROXY_IDS == 16384 && RING_OPTION_BUCKETS == 32768 && RING_OPTION_REMOVED_BUCKETS == 65536 &&
              RING_OPTION_SCORE == 131072,
          "bit values are fixed");
    /* HAProxy's avalanche is 0 or 1; its ids array must be there when its bit is set. */
    defaults.algorithm = "haproxy";
    defaults.fields = RING_OPTION_AVALANCHE;
    defaults.avalanche = 2;
    CHECK(ring_new_with_options(ids, lens, NULL, NULL, NULL, 2, &defaults, &chosen) == RING_INVALID_CONFIG && !chosen,
          "avalanche 2");
    CHECK(last_error_has("avalanche"), "names avalanche: %s", ring_last_error());
    defaults.fields = RING_OPTION_HAPROXY_IDS;
    defaults.haproxy_ids = NULL;
    CHECK(ring_new_with_options(ids, lens, NULL, NULL, NULL, 2, &defaults, &chosen) == RING_NULL_ARGUMENT && !chosen,
          "haproxy_ids bit with NULL");
    CHECK(last_error_has("haproxy_ids"), "names haproxy_ids: %s", ring_last_error());
    uint32_t same_ids[2] = {4, 4};
    defaults.haproxy_ids = same_ids;
    CHECK(ring_new_with_options(ids, lens, NULL, NULL, NULL, 2, &defaults, &chosen) == RING_INVALID_CONFIG && !chosen,
          "two servers with one id");
    CHECK(last_error_has("same id 4"), "names the id: %s", ring_last_error());
    defaults.algorithm = "envoy-ring-hash";
    defaults.fields = RING_OPTION_MIN_RING_SIZE | RING_OPTION_MAX_RING_SIZE;
    defaults.min_ring_size = 10;
    defaults.max_ring_size = 5;
    CHECK(ring_new_with_options(ids, lens, NULL, NULL, NULL, 2, &defaults, &chosen) == RING_INVALID_CONFIG && !chosen,
          "minimum above maximum");
    CHECK(last_error_has("minimum_ring_size (10) > maximum_ring_size (5)"), "Envoy's message: %s", ring_last_error());
    /* Memento's history: buckets one per node, removed buckets with a count. */
    defaults.algorithm = "memento";
    defaults.fields = RING_OPTION_BUCKETS | RING_OPTION_REMOVED_BUCKETS;
    uint32_t buckets[2] = {2, 0}, removed[1] = {1};
    defaults.buckets = buckets;
    defaults.removed_buckets = removed;
    defaults.removed_bucket_count = 1;
    CHECK(ring_new_with_options(ids, lens, NULL, NULL, NULL, 2, &defaults, &chosen) == RING_OK, "memento with a history");
    char *memento_json = NULL;
    size_t memento_len = 0;
    CHECK(ring_to_json(chosen, &memento_json, &memento_len) == RING_OK && strstr(memento_json, "\"removed_buckets\"") &&
              strstr(memento_json, "\"bucket\": 2"),
          "the history is in the config: %s", memento_json ? memento_json : "(none)");
    ring_string_free(memento_json);
    ring_free(chosen);
    chosen = NULL;
    defaults.removed_buckets = NULL;
    CHECK(ring_new_with_options(ids, lens, NULL, NULL, NULL, 2, &defaults, &chosen) == RING_NULL_ARGUMENT && !chosen,
          "removed_buckets NULL with a count");
    CHECK(last_error_has("removed_buckets"), "names removed_buckets: %s", ring_last_error());
    defaults.removed_buckets = removed;
    /* A count past memento's 2^31 - 1 buckets is refused before the array is read. */
    defaults.removed_bucket_count = (size_t)1 << 31;
    CHECK(ring_new_with_options(ids, lens, NULL, NULL, NULL, 2, &defaults, &chosen) == RING_INVALID_CONFIG && !chosen,
          "a removed_bucket_count past the bucket limit");
    CHECK(last_error_has("removed_bucket_count 2147483648"), "names the count: %s", ring_last_error());
    defaults.removed_bucket_count = 1;
    buckets[0] = 1;
    CHECK(ring_new_with_options(ids, lens, NULL, NULL, NULL, 2, &defaults, &chosen) == RING_INVALID_CONFIG && !chosen,
          "a bucket both held and removed");
    CHECK(last_error_has("bucket 1 is also in removed_buckets"), "names the bucket: %s", ring_last_error());
    defaults.algorithm = "ring";
    CHECK(ring_new_with_options(ids, lens, NULL, NULL, NULL, 2, &defaults, &chosen) == RING_INVALID_CONFIG && !chosen,
          "buckets outside memento");
    CHECK(last_error_has("buckets do not apply"), "names buckets: %s", ring_last_error());
    /* The rendezvous score: integer or float, by name. */
    defaults.algorithm = "rendezvous";
    defaults.fields = RING_OPTION_SCORE;
    defaults.score = "exact";
    CHECK(ring_new_with_options(ids, lens, NULL, NULL, NULL, 2, &defaults, &chosen) == RING_INVALID_CONFIG && !chosen,
          "an unknown score");
    CHECK(last_error_has("unknown score \"exact\""), "names the score: %s", ring_last_error());
    defaults.score = "float";
    CHECK(ring_new_with_options(ids, lens, NULL, NULL, NULL, 2, &defaults, &chosen) == RING_OK, "the float score");
    ring_free(chosen);
    chosen = NULL;
    /* A set bit with a NULL string is a NULL argument, naming the field. */
    defaults.algorithm = "twemproxy";
    defaults.fields = RING_OPTION_HASH_TAG;
    defaults.hash_tag = NULL;
    CHECK(ring_new_with_options(ids, lens, NULL, NULL, NULL, 2, &defaults, &chosen) == RING_NULL_ARGUMENT && !chosen,
          "hash_tag bit with NULL");
    CHECK(last_error_has("hash_tag"), "names hash_tag: %s", ring_last_error());
    defaults.algorithm = NULL;
    ring_free(plain);

    /* Reference counting and messages. */
    ring_t *second = ring_clone(ring);
    CHECK(second == ring, "ring_clone returns the same handle");
    ring_free(ring);
    CHECK(ring_node_count(second) == 2, "handle lives while a reference remains");
    ring_free(second);
    ring_free(NULL);
    CHECK(ring_clone(NULL) == NULL, "clone of NULL");
    CHECK(ring_node_count(NULL) == 0 && ring_fingerprint(NULL) == 0 && ring_hash_key(NULL, NULL, 0) == 0, "NULL reads");
    CHECK(strcmp(ring_result_str(RING_EMPTY_RING), "ring has no points (no node with weight > 0)") == 0, "result str");
    CHECK(strcmp(ring_result_str(9999), "unknown result code") == 0, "unknown result code");
    char *json = NULL;
    size_t json_len = 0;
    CHECK(ring_to_json(NULL, &json, &json_len) == RING_NULL_ARGUMENT && json == NULL, "to_json of NULL");
    ring_string_free(NULL);
    return CHECK_SUMMARY("C errors");
}
