/* Every error a C caller can hit: the code, the detailed message, and that
 * outputs stay untouched on failure. */
#define _DEFAULT_SOURCE /* mmap's MAP_ANONYMOUS, sysconf */
#include <math.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "check.h"
#include <stdint.h>

#include "ring.h"

static int last_error_has(const char *needle) { return strstr(ring_last_error(), needle) != NULL; }

/* The entry point of programs built against the headers before
 * ring_new_with_options_sized: no longer declared in ring.h, still exported,
 * for a ring_options_t of the first layout (below). */
ring_result ring_new_with_options(const char *const *ids, const size_t *id_lens, const double *weights,
                                  const char *const *zones, const size_t *zone_lens, size_t node_count,
                                  const ring_options_t *options, ring_t **out_ring);

/* ring_options_t as those headers declared it. Fields are only ever
 * appended, so every one of them keeps its offset in ring.h's struct. */
typedef struct {
    uint32_t fields;
    const char *algorithm;
    uint32_t vnodes;
    uint64_t seed;
    uint32_t table_size;
    const char *distribution, *key_hash, *server_ids, *hash_tag;
    uint32_t default_port;
    uint64_t min_ring_size, max_ring_size;
    const char *hash_function, *endpoint_order;
    uint32_t avalanche;
    const char *server_key;
    const uint32_t *haproxy_ids, *buckets, *removed_buckets;
    size_t removed_bucket_count;
    const char *score;
} options_v1_t;
#define SAME_OFFSET(field) \
    _Static_assert(offsetof(options_v1_t, field) == offsetof(ring_options_t, field), #field " moved in ring_options_t")
SAME_OFFSET(fields);
SAME_OFFSET(algorithm);
SAME_OFFSET(vnodes);
SAME_OFFSET(seed);
SAME_OFFSET(table_size);
SAME_OFFSET(distribution);
SAME_OFFSET(key_hash);
SAME_OFFSET(server_ids);
SAME_OFFSET(hash_tag);
SAME_OFFSET(default_port);
SAME_OFFSET(min_ring_size);
SAME_OFFSET(max_ring_size);
SAME_OFFSET(hash_function);
SAME_OFFSET(endpoint_order);
SAME_OFFSET(avalanche);
SAME_OFFSET(server_key);
SAME_OFFSET(haproxy_ids);
SAME_OFFSET(buckets);
SAME_OFFSET(removed_buckets);
SAME_OFFSET(removed_bucket_count);
SAME_OFFSET(score);
_Static_assert(sizeof(options_v1_t) <= sizeof(ring_options_t), "ring_options_t only grows");

/* ring_options_t.params: any parameter by name as JSON, each given once;
 * a bad object is refused naming what is wrong. */
static void options_params(const char *const *ids, const size_t *lens) {
    ring_t *chosen = NULL, *reference = NULL;
    const char *maglev_251 = "{\"format_version\":1,\"algorithm\":\"maglev\",\"table_size\":251,"
                             "\"nodes\":[{\"id\":\"a\"},{\"id\":\"b\"}]}";
    CHECK(ring_new_from_json(maglev_251, strlen(maglev_251), &reference) == RING_OK, "Maglev of 251 from JSON");
    struct {
        const char *algorithm, *params;
    } same[] = {
        {"maglev", "{\"table_size\": 251}"},
        {NULL, "{\"algorithm\": \"maglev\", \"table_size\": 251}"},
        {NULL, "{\"table_size\": 251, \"algorithm\": \"maglev\", \"seed\": 0}"},
    };
    for (size_t i = 0; i < sizeof same / sizeof *same; i++) {
        ring_options_t o = {.fields = RING_OPTION_PARAMS, .algorithm = same[i].algorithm, .params = same[i].params};
        CHECK(ring_new_with_options_sized(ids, lens, NULL, NULL, NULL, 2, &o, sizeof o, &chosen) == RING_OK &&
                  ring_fingerprint(chosen) == ring_fingerprint(reference),
              "params %s: the table of 251 (%s)", same[i].params, ring_last_error());
        ring_free(chosen);
        chosen = NULL;
    }
    /* Refused: (algorithm, params, result, what the message names). */
    struct {
        const char *algorithm, *params;
        ring_result want;
        const char *named;
    } refused[] = {
        {"maglev", "{\"table_size\": 251, \"algorithm\": \"maglev\"}", RING_INVALID_CONFIG, "\"algorithm\""},
        {"maglev", "{\"colour\": 1}", RING_INVALID_CONFIG, "colour"},
        {"maglev", "{\"table_size\": \"big\"}", RING_INVALID_CONFIG, "table_size"},
        {"maglev", "{\"table_size\": 251, \"table_size\": 7}", RING_INVALID_CONFIG, "table_size"},
        {"maglev", "{\"table_size\": null}", RING_INVALID_CONFIG, "null"},
        {"maglev", "{\"table_size\": ", RING_INVALID_CONFIG, "line 1"},
        {"maglev", "[251]", RING_INVALID_CONFIG, "expected a JSON object"},
        {"maglev", "{\"vnodes\": 40}", RING_INVALID_CONFIG, "vnodes"},
        {"maglev", NULL, RING_NULL_ARGUMENT, "ring_new_with_options_sized"},
    };
    for (size_t i = 0; i < sizeof refused / sizeof *refused; i++) {
        ring_options_t o = {.fields = RING_OPTION_PARAMS, .algorithm = refused[i].algorithm, .params = refused[i].params};
        CHECK(ring_new_with_options_sized(ids, lens, NULL, NULL, NULL, 2, &o, sizeof o, &chosen) == refused[i].want &&
                  !chosen && last_error_has(refused[i].named),
              "params %s refused, naming %s: %s", refused[i].params ? refused[i].params : "NULL", refused[i].named,
              ring_last_error());
        ring_free(chosen);
        chosen = NULL;
    }
    /* A field and `params` giving the same parameter: refused, naming both. */
    ring_options_t twice = {.fields = RING_OPTION_PARAMS | RING_OPTION_TABLE_SIZE,
                            .algorithm = "maglev",
                            .table_size = 251,
                            .params = "{\"table_size\": 251}"};
    CHECK(ring_new_with_options_sized(ids, lens, NULL, NULL, NULL, 2, &twice, sizeof twice, &chosen) ==
                  RING_INVALID_CONFIG &&
              !chosen && last_error_has("give it once") &&
              last_error_has("`options.table_size`"),
          "table_size in its field and in params: %s", ring_last_error());
    ring_free(chosen);
    ring_free(reference);
}

/* A value without its bit is refused, naming the field and the bit, for
 * every field; the size passed says which fields the caller's struct has;
 * programs built against earlier headers keep working. `plain` is a ring of
 * `ids` with every default. */
static void options_without_bits(const char *const *ids, const size_t *lens, const ring_t *plain) {
    ring_t *chosen = NULL, *reference = NULL;
    char name[64];

    /* The example: a designated initializer without the bit built a
     * Maglev table of 65,537 in silence. */
    ring_options_t o = {.algorithm = "maglev", .table_size = 251};
    CHECK(ring_new_with_options_sized(ids, lens, NULL, NULL, NULL, 2, &o, sizeof o, &chosen) == RING_INVALID_CONFIG &&
              !chosen,
          "table_size 251 without RING_OPTION_TABLE_SIZE");
    CHECK(last_error_has("`options.table_size` is 251") && last_error_has("RING_OPTION_TABLE_SIZE (0x4)"),
          "names the field, its value and the bit: %s", ring_last_error());
    o.fields = RING_OPTION_TABLE_SIZE;
    const char *maglev_251 = "{\"format_version\":1,\"algorithm\":\"maglev\",\"table_size\":251,"
                             "\"nodes\":[{\"id\":\"a\"},{\"id\":\"b\"}]}";
    CHECK(ring_new_from_json(maglev_251, strlen(maglev_251), &reference) == RING_OK, "Maglev of 251 from JSON");
    CHECK(ring_new_with_options_sized(ids, lens, NULL, NULL, NULL, 2, &o, sizeof o, &chosen) == RING_OK &&
              ring_fingerprint(chosen) == ring_fingerprint(reference),
          "with its bit, the table has 251 slots");
    ring_free(chosen);
    ring_free(reference);
    chosen = NULL;

    /* Every field: set alone, without its bit, it is refused by name. */
    static const uint32_t some_ids[2] = {1, 2};
#define WITHOUT_BIT(field, value, constant)                                                                      \
    do {                                                                                                         \
        ring_options_t alone = {0};                                                                              \
        alone.field = value;                                                                                     \
        snprintf(name, sizeof name, "`options.%s`", #field);                                                    \
        CHECK(ring_new_with_options_sized(ids, lens, NULL, NULL, NULL, 2, &alone, sizeof alone, &chosen) ==      \
                      RING_INVALID_CONFIG &&                                                                     \
                  !chosen && last_error_has(name) && last_error_has(#constant),                                  \
              "%s without %s: %s", #field, #constant, ring_last_error());                                        \
        /* A ring built where it should be refused fails here, not the checks after. */                          \
        ring_free(chosen);                                                                                       \
        chosen = NULL;                                                                                           \
    } while (0)
    WITHOUT_BIT(vnodes, 7, RING_OPTION_VNODES);
    WITHOUT_BIT(seed, 99, RING_OPTION_SEED);
    WITHOUT_BIT(table_size, 11, RING_OPTION_TABLE_SIZE);
    WITHOUT_BIT(distribution, "modula", RING_OPTION_DISTRIBUTION);
    WITHOUT_BIT(key_hash, "md5", RING_OPTION_KEY_HASH);
    WITHOUT_BIT(server_ids, "label", RING_OPTION_SERVER_IDS);
    WITHOUT_BIT(hash_tag, "{}", RING_OPTION_HASH_TAG);
    WITHOUT_BIT(default_port, 11211, RING_OPTION_DEFAULT_PORT);
    WITHOUT_BIT(min_ring_size, 64, RING_OPTION_MIN_RING_SIZE);
    WITHOUT_BIT(max_ring_size, 4096, RING_OPTION_MAX_RING_SIZE);
    WITHOUT_BIT(hash_function, "djb2", RING_OPTION_HASH_FUNCTION);
    WITHOUT_BIT(endpoint_order, "by_key", RING_OPTION_ENDPOINT_ORDER);
    WITHOUT_BIT(avalanche, 1, RING_OPTION_AVALANCHE);
    WITHOUT_BIT(server_key, "id32", RING_OPTION_SERVER_KEY);
    WITHOUT_BIT(haproxy_ids, some_ids, RING_OPTION_HAPROXY_IDS);
    WITHOUT_BIT(buckets, some_ids, RING_OPTION_BUCKETS);
    WITHOUT_BIT(removed_buckets, some_ids, RING_OPTION_REMOVED_BUCKETS);
    WITHOUT_BIT(removed_bucket_count, 1, RING_OPTION_REMOVED_BUCKETS);
    WITHOUT_BIT(score, "float", RING_OPTION_SCORE);
    WITHOUT_BIT(params, "{}", RING_OPTION_PARAMS);
#undef WITHOUT_BIT

    /* The size: sizeof the caller's struct. Smaller than the first layout,
     * between two layouts (a field cut in half), or not a size at all, is
     * refused before anything is read. */
    ring_options_t zeroed = {0};
    size_t bad_sizes[] = {0, offsetof(ring_options_t, params) - 1, offsetof(ring_options_t, params) + 4,
                          sizeof zeroed - 1, 4097, SIZE_MAX};
    for (size_t i = 0; i < sizeof bad_sizes / sizeof bad_sizes[0]; i++) {
        snprintf(name, sizeof name, "options_size %zu", bad_sizes[i]);
        CHECK(ring_new_with_options_sized(ids, lens, NULL, NULL, NULL, 2, &zeroed, bad_sizes[i], &chosen) ==
                      RING_INVALID_CONFIG &&
                  !chosen && last_error_has(name),
              "%s: %s", name, ring_last_error());
    }
    CHECK(ring_new_with_options_sized(ids, lens, NULL, NULL, NULL, 2, NULL, 0, &chosen) == RING_OK &&
              ring_fingerprint(chosen) == ring_fingerprint(plain),
          "NULL options: every default");
    ring_free(chosen);
    chosen = NULL;
    /* A struct from a newer header: accepted while the fields this library
     * does not know are zero, refused (not ignored) when one is set. */
    struct {
        ring_options_t known;
        uint64_t later;
    } newer = {.known = {.fields = RING_OPTION_SEED, .seed = 99}, .later = 0};
    CHECK(ring_new(ids, lens, NULL, NULL, NULL, 2, 160, 99, &reference) == RING_OK, "seed 99");
    CHECK(ring_new_with_options_sized(ids, lens, NULL, NULL, NULL, 2, &newer.known, sizeof newer, &chosen) ==
                  RING_OK &&
              ring_fingerprint(chosen) == ring_fingerprint(reference),
          "a longer struct whose unknown fields are zero: %s", ring_last_error());
    ring_free(chosen);
    chosen = NULL;
    newer.later = 5;
    CHECK(ring_new_with_options_sized(ids, lens, NULL, NULL, NULL, 2, &newer.known, sizeof newer, &chosen) ==
                  RING_INVALID_CONFIG &&
              !chosen && last_error_has("newer ring.h"),
          "a longer struct with a field this library does not know: %s", ring_last_error());

    /* A program built against an earlier header calls ring_new_with_options
     * with the first layout: with its bits set it keeps working unchanged. */
    options_v1_t old = {.fields = RING_OPTION_VNODES | RING_OPTION_SEED, .vnodes = 160, .seed = 99};
    CHECK(RING_NO_PANIC(ring_new_with_options, ids, lens, NULL, NULL, NULL, 2, (const ring_options_t *)&old,
                        &chosen) == RING_OK &&
              ring_fingerprint(chosen) == ring_fingerprint(reference),
          "an earlier program's options with their bits: %s", ring_last_error());
    ring_free(chosen);
    chosen = NULL;
    CHECK(RING_NO_PANIC(ring_new_with_options, ids, lens, NULL, NULL, NULL, 2, NULL, &chosen) == RING_OK &&
              ring_fingerprint(chosen) == ring_fingerprint(plain),
          "an earlier program's NULL options");
    ring_free(chosen);
    chosen = NULL;
    /* ... and a value without its bit is ignored, as it was: an old binary
     * keeps the ring it always had (the default 65,537-slot table), while
     * the same struct through today's header is refused (above). */
    old = (options_v1_t){.algorithm = "maglev", .table_size = 251, .seed = 7};
    ring_options_t maglev = {.algorithm = "maglev"};
    ring_t *default_table = NULL;
    CHECK(ring_new_with_options_sized(ids, lens, NULL, NULL, NULL, 2, &maglev, sizeof maglev, &default_table) ==
              RING_OK,
          "the default maglev table: %s", ring_last_error());
    CHECK(RING_NO_PANIC(ring_new_with_options, ids, lens, NULL, NULL, NULL, 2, (const ring_options_t *)&old,
                        &chosen) == RING_OK &&
              ring_fingerprint(chosen) == ring_fingerprint(default_table),
          "an earlier program's values without their bits are ignored as before: %s", ring_last_error());
    ring_free(chosen);
    ring_free(default_table);
    chosen = NULL;

    /* A program built against an older header has a shorter struct: only
     * the fields up to its last bit are read. Here the struct ends with
     * `seed`, right before a page that may not be read. */
    long page = sysconf(_SC_PAGESIZE);
    unsigned char *pages = mmap(NULL, 2 * (size_t)page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    CHECK(pages != MAP_FAILED && mprotect(pages + page, (size_t)page, PROT_NONE) == 0, "a guard page");
    size_t short_size = offsetof(options_v1_t, seed) + sizeof(uint64_t);
    options_v1_t *at_edge = (options_v1_t *)(void *)(pages + page - short_size);
    memset(at_edge, 0, short_size);
    at_edge->fields = RING_OPTION_VNODES | RING_OPTION_SEED;
    at_edge->vnodes = 160;
    at_edge->seed = 99;
    CHECK(RING_NO_PANIC(ring_new_with_options, ids, lens, NULL, NULL, NULL, 2, (const ring_options_t *)at_edge,
                        &chosen) == RING_OK &&
              ring_fingerprint(chosen) == ring_fingerprint(reference),
          "an older program's shorter struct is read only as far as its bits go: %s", ring_last_error());
    ring_free(chosen);
    chosen = NULL;
    munmap(pages, 2 * (size_t)page);
    ring_free(reference);
}

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

    /* Algorithms and their parameters. Each case starts from a zeroed struct:
     * a field holding a value without its bit is refused (see below). */
    ring_options_t options = {.algorithm = "consistent"};
    CHECK(ring_new_with_options_sized(ids, lens, NULL, NULL, NULL, 2, &options, sizeof options, &ring) ==
              RING_INVALID_CONFIG,
          "unknown");
    CHECK(last_error_has("\"consistent\"") && last_error_has("maglev"), "names it and the choices: %s", ring_last_error());
    options = (ring_options_t){.algorithm = "maglev", .fields = RING_OPTION_TABLE_SIZE, .table_size = 65535};
    CHECK(ring_new_with_options_sized(ids, lens, NULL, NULL, NULL, 2, &options, sizeof options, &ring) ==
              RING_INVALID_TABLE_SIZE,
          "65535");
    CHECK(last_error_has("65535") && last_error_has("prime"), "names the size: %s", ring_last_error());
    options = (ring_options_t){.algorithm = "ketama"};
    const char *servers[] = {"10.0.0.1:99999"};
    size_t server_lens[] = {14};
    CHECK(ring_new_with_options_sized(servers, server_lens, NULL, NULL, NULL, 1, &options, sizeof options, &ring) ==
              RING_INVALID_ADDRESS,
          "port 99999");
    CHECK(last_error_has("99999"), "names the port: %s", ring_last_error());
    double half[] = {0.5};
    CHECK(ring_new_with_options_sized(ids, lens, half, NULL, NULL, 1, &options, sizeof options, &ring) ==
              RING_INVALID_WEIGHT,
          "ketama 0.5");
    CHECK(last_error_has("whole numbers"), "states the rule: %s", ring_last_error());
    options = (ring_options_t){.algorithm = "ketama", .fields = RING_OPTION_SEED, .seed = 9};
    CHECK(ring_new_with_options_sized(ids, lens, NULL, NULL, NULL, 1, &options, sizeof options, &ring) ==
              RING_INVALID_CONFIG,
          "ketama seed");
    options = (ring_options_t){.algorithm = "jump"};
    double two[] = {1.0, 2.0};
    CHECK(ring_new_with_options_sized(ids, lens, two, NULL, NULL, 2, &options, sizeof options, &ring) ==
              RING_INVALID_WEIGHT,
          "jump weight 2");
    options = (ring_options_t){.algorithm = "slots"};
    ring_t *slots = NULL, *plain = NULL;
    CHECK(ring_new_with_options_sized(ids, lens, NULL, NULL, NULL, 2, &options, sizeof options, &slots) == RING_OK,
          "slots ring");
    index = 42;
    CHECK(ring_get_node_by_hash(slots, 16384, &index) == RING_HASH_OUT_OF_RANGE && index == 42, "slot 16384");
    CHECK(ring_get_node_by_hash(slots, 16383, &index) == RING_OK && index == 1, "slot 16383 is the second node's");
    CHECK(strcmp(ring_algorithm(slots), "slots") == 0 && ring_algorithm(NULL) == NULL, "ring_algorithm");
    CHECK(ring_new_with_options_sized(ids, lens, NULL, NULL, NULL, 2, NULL, 0, &plain) == RING_OK, "NULL options");
    CHECK(strcmp(ring_algorithm(plain), "ring") == 0, "NULL options mean the ring algorithm");
    CHECK(ring_diff(plain, slots, &diff) == RING_ALGORITHM_MISMATCH, "diff across algorithms");
    CHECK(last_error_has("ring") && last_error_has("slots"), "names both: %s", ring_last_error());
    ring_free(slots);

    /* One rule for defaults: a parameter counts only when its bit is set in
     * `fields`; anything passed must be valid, and 0 is never a default. */
    ring_t *reference = NULL, *chosen = NULL;
    ring_options_t defaults = {0};
    CHECK(ring_new(ids, lens, NULL, NULL, NULL, 2, 160, 0, &reference) == RING_OK, "160 vnodes, seed 0");
    CHECK(ring_new_with_options_sized(ids, lens, NULL, NULL, NULL, 2, &defaults, sizeof defaults, &chosen) == RING_OK,
          "zeroed fields");
    CHECK(ring_fingerprint(chosen) == ring_fingerprint(reference) && strcmp(ring_algorithm(chosen), "ring") == 0,
          "a zeroed struct means the ring algorithm, 160 vnodes and seed 0");
    ring_free(chosen);
    ring_free(reference);
    defaults = (ring_options_t){.fields = RING_OPTION_VNODES | RING_OPTION_SEED, .vnodes = 7, .seed = 99};
    CHECK(ring_new(ids, lens, NULL, NULL, NULL, 2, 7, 99, &reference) == RING_OK, "7 vnodes, seed 99");
    CHECK(ring_new_with_options_sized(ids, lens, NULL, NULL, NULL, 2, &defaults, sizeof defaults, &chosen) == RING_OK,
          "vnodes and seed bits");
    CHECK(ring_fingerprint(chosen) == ring_fingerprint(reference), "set bits pass vnodes 7 and seed 99 as given");
    CHECK(ring_fingerprint(chosen) != ring_fingerprint(plain), "and they are not the defaults");
    ring_free(chosen);
    ring_free(reference);
    chosen = NULL;
    defaults = (ring_options_t){.fields = RING_OPTION_VNODES, .vnodes = 0};
    CHECK(ring_new_with_options_sized(ids, lens, NULL, NULL, NULL, 2, &defaults, sizeof defaults, &chosen) ==
                  RING_ZERO_VNODES &&
              !chosen,
          "vnodes 0 with its bit set is RING_ZERO_VNODES, not the default");
    CHECK(last_error_has("got 0"), "names the 0: %s", ring_last_error());
    CHECK(ring_new(ids, lens, NULL, NULL, NULL, 2, 0, 0, &chosen) == RING_ZERO_VNODES && !chosen,
          "ring_new passes vnodes 0 as given");
    defaults = (ring_options_t){.algorithm = "maglev", .fields = RING_OPTION_TABLE_SIZE, .table_size = 0};
    CHECK(ring_new_with_options_sized(ids, lens, NULL, NULL, NULL, 2, &defaults, sizeof defaults, &chosen) ==
                  RING_INVALID_TABLE_SIZE &&
              !chosen,
          "table_size 0 with its bit set is RING_INVALID_TABLE_SIZE, not the default");
    CHECK(last_error_has("table size 0"), "names the size: %s", ring_last_error());
    defaults = (ring_options_t){.algorithm = "maglev"};
    const char *maglev_json = "{\"format_version\":1,\"algorithm\":\"maglev\",\"table_size\":65537,"
                              "\"nodes\":[{\"id\":\"a\"},{\"id\":\"b\"}]}";
    CHECK(ring_new_from_json(maglev_json, strlen(maglev_json), &reference) == RING_OK, "Maglev of 65,537");
    CHECK(ring_new_with_options_sized(ids, lens, NULL, NULL, NULL, 2, &defaults, sizeof defaults, &chosen) == RING_OK &&
              ring_fingerprint(chosen) == ring_fingerprint(reference),
          "Maglev without the table-size bit (and table_size 0) has the default table of 65,537");
    ring_free(chosen);
    ring_free(reference);
    chosen = NULL;
    defaults = (ring_options_t){.algorithm = "maglev", .fields = RING_OPTION_VNODES, .vnodes = 160};
    CHECK(ring_new_with_options_sized(ids, lens, NULL, NULL, NULL, 2, &defaults, sizeof defaults, &chosen) ==
                  RING_INVALID_CONFIG &&
              !chosen,
          "vnodes given to maglev, even the default value, is a parameter it does not take");
    CHECK(last_error_has("vnodes"), "names vnodes: %s", ring_last_error());
    defaults = (ring_options_t){.fields = RING_OPTION_VNODES | 0x80000u | 0x100000u, .vnodes = 160};
    CHECK(ring_new_with_options_sized(ids, lens, NULL, NULL, NULL, 2, &defaults, sizeof defaults, &chosen) ==
                  RING_INVALID_CONFIG &&
              !chosen,
          "bits no RING_OPTION_* defines");
    CHECK(last_error_has("0x180000"), "names the unknown bits: %s", ring_last_error());
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
    defaults = (ring_options_t){.algorithm = "haproxy", .fields = RING_OPTION_AVALANCHE, .avalanche = 2};
    CHECK(ring_new_with_options_sized(ids, lens, NULL, NULL, NULL, 2, &defaults, sizeof defaults, &chosen) ==
                  RING_INVALID_CONFIG &&
              !chosen,
          "avalanche 2");
    CHECK(last_error_has("avalanche"), "names avalanche: %s", ring_last_error());
    defaults = (ring_options_t){.algorithm = "haproxy", .fields = RING_OPTION_HAPROXY_IDS, .haproxy_ids = NULL};
    CHECK(ring_new_with_options_sized(ids, lens, NULL, NULL, NULL, 2, &defaults, sizeof defaults, &chosen) ==
                  RING_NULL_ARGUMENT &&
              !chosen,
          "haproxy_ids bit with NULL");
    CHECK(last_error_has("haproxy_ids"), "names haproxy_ids: %s", ring_last_error());
    uint32_t same_ids[2] = {4, 4};
    defaults.haproxy_ids = same_ids;
    CHECK(ring_new_with_options_sized(ids, lens, NULL, NULL, NULL, 2, &defaults, sizeof defaults, &chosen) ==
                  RING_INVALID_CONFIG &&
              !chosen,
          "two servers with one id");
    CHECK(last_error_has("same id 4"), "names the id: %s", ring_last_error());
    defaults = (ring_options_t){.algorithm = "envoy-ring-hash",
                                .fields = RING_OPTION_MIN_RING_SIZE | RING_OPTION_MAX_RING_SIZE,
                                .min_ring_size = 10,
                                .max_ring_size = 5};
    CHECK(ring_new_with_options_sized(ids, lens, NULL, NULL, NULL, 2, &defaults, sizeof defaults, &chosen) ==
                  RING_INVALID_CONFIG &&
              !chosen,
          "minimum above maximum");
    CHECK(last_error_has("minimum_ring_size (10) > maximum_ring_size (5)"), "Envoy's message: %s", ring_last_error());
    /* Memento's history: buckets one per node, removed buckets with a count. */
    uint32_t buckets[2] = {2, 0}, removed[1] = {1};
    defaults = (ring_options_t){.algorithm = "memento",
                                .fields = RING_OPTION_BUCKETS | RING_OPTION_REMOVED_BUCKETS,
                                .buckets = buckets,
                                .removed_buckets = removed,
                                .removed_bucket_count = 1};
    CHECK(ring_new_with_options_sized(ids, lens, NULL, NULL, NULL, 2, &defaults, sizeof defaults, &chosen) == RING_OK,
          "memento with a history");
    char *memento_json = NULL;
    size_t memento_len = 0;
    CHECK(ring_to_json(chosen, &memento_json, &memento_len) == RING_OK && strstr(memento_json, "\"removed_buckets\"") &&
              strstr(memento_json, "\"bucket\": 2"),
          "the history is in the config: %s", memento_json ? memento_json : "(none)");
    ring_string_free(memento_json);
    ring_free(chosen);
    chosen = NULL;
    defaults.removed_buckets = NULL;
    CHECK(ring_new_with_options_sized(ids, lens, NULL, NULL, NULL, 2, &defaults, sizeof defaults, &chosen) ==
                  RING_NULL_ARGUMENT &&
              !chosen,
          "removed_buckets NULL with a count");
    CHECK(last_error_has("removed_buckets"), "names removed_buckets: %s", ring_last_error());
    defaults.removed_buckets = removed;
    /* A count past memento's 2^31 - 1 buckets is refused before the array is read. */
    defaults.removed_bucket_count = (size_t)1 << 31;
    CHECK(ring_new_with_options_sized(ids, lens, NULL, NULL, NULL, 2, &defaults, sizeof defaults, &chosen) ==
                  RING_INVALID_CONFIG &&
              !chosen,
          "a removed_bucket_count past the bucket limit");
    CHECK(last_error_has("removed_bucket_count 2147483648"), "names the count: %s", ring_last_error());
    defaults.removed_bucket_count = 1;
    buckets[0] = 1;
    CHECK(ring_new_with_options_sized(ids, lens, NULL, NULL, NULL, 2, &defaults, sizeof defaults, &chosen) ==
                  RING_INVALID_CONFIG &&
              !chosen,
          "a bucket both held and removed");
    CHECK(last_error_has("bucket 1 is also in removed_buckets"), "names the bucket: %s", ring_last_error());
    defaults.algorithm = "ring";
    CHECK(ring_new_with_options_sized(ids, lens, NULL, NULL, NULL, 2, &defaults, sizeof defaults, &chosen) ==
                  RING_INVALID_CONFIG &&
              !chosen,
          "buckets outside memento");
    CHECK(last_error_has("removed_buckets ([1]) does not apply"), "names the removed buckets: %s", ring_last_error());
    /* The rendezvous score: integer or float, by name. */
    defaults = (ring_options_t){.algorithm = "rendezvous", .fields = RING_OPTION_SCORE, .score = "exact"};
    CHECK(ring_new_with_options_sized(ids, lens, NULL, NULL, NULL, 2, &defaults, sizeof defaults, &chosen) ==
                  RING_INVALID_CONFIG &&
              !chosen,
          "an unknown score");
    CHECK(last_error_has("unknown score \"exact\""), "names the score: %s", ring_last_error());
    defaults.score = "float";
    CHECK(ring_new_with_options_sized(ids, lens, NULL, NULL, NULL, 2, &defaults, sizeof defaults, &chosen) == RING_OK,
          "the float score");
    ring_free(chosen);
    chosen = NULL;
    /* A set bit with a NULL string is a NULL argument, naming the field. */
    defaults = (ring_options_t){.algorithm = "twemproxy", .fields = RING_OPTION_HASH_TAG, .hash_tag = NULL};
    CHECK(ring_new_with_options_sized(ids, lens, NULL, NULL, NULL, 2, &defaults, sizeof defaults, &chosen) ==
                  RING_NULL_ARGUMENT &&
              !chosen,
          "hash_tag bit with NULL");
    CHECK(last_error_has("hash_tag"), "names hash_tag: %s", ring_last_error());

    options_without_bits(ids, lens, plain);
    options_params(ids, lens);
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
    /* The fingerprint as text: 16 digits and a NUL, into a buffer of at least
     * RING_FINGERPRINT_HEX_LEN bytes; nothing is written on error, nor past the NUL. */
    char hex[20];
    memset(hex, '#', sizeof hex);
    ring_t *printed = NULL;
    CHECK(ring_new(ids, lens, NULL, NULL, NULL, 2, 160, 0, &printed) == RING_OK, "a ring to print");
    CHECK(RING_FINGERPRINT_HEX_LEN == 17, "16 digits and a NUL");
    CHECK(ring_fingerprint_hex(printed, hex, 16) == RING_BUFFER_TOO_SMALL && hex[0] == '#', "16 bytes");
    CHECK(last_error_has("out_hex holds 16 bytes"), "names the length: %s", ring_last_error());
    CHECK(ring_fingerprint_hex(NULL, hex, sizeof hex) == RING_NULL_ARGUMENT && hex[0] == '#', "NULL ring");
    CHECK(ring_fingerprint_hex(printed, NULL, 17) == RING_NULL_ARGUMENT, "NULL buffer");
    CHECK(ring_fingerprint_hex(printed, hex, sizeof hex) == RING_OK && strlen(hex) == 16 && hex[17] == '#' &&
              strtoull(hex, NULL, 16) == ring_fingerprint(printed) && strspn(hex, "0123456789abcdef") == 16,
          "a larger buffer: %s", hex);
    ring_free(printed);
    CHECK(strcmp(ring_result_str(RING_EMPTY_RING), "ring has no points (no node with weight > 0)") == 0, "result str");
    CHECK(strcmp(ring_result_str(9999), "unknown result code") == 0, "unknown result code");
    /* Every code up to the last (RING_REFUSED, 25) has its name and a description; the next has neither. */
    for (uint32_t code = RING_OK; code <= RING_REFUSED; code++) {
        CHECK(strncmp(ring_result_name(code), "RING_", 5) == 0 &&
                  strcmp(ring_result_name(code), "RING_UNKNOWN_RESULT") != 0 &&
                  strcmp(ring_result_str(code), "unknown result code") != 0,
              "code %u: %s, %s", code, ring_result_name(code), ring_result_str(code));
    }
    CHECK(RING_REFUSED == 25 && strcmp(ring_result_name(RING_REFUSED), "RING_REFUSED") == 0, "RING_REFUSED");
    CHECK(strcmp(ring_result_name(RING_REFUSED + 1), "RING_UNKNOWN_RESULT") == 0 &&
              strcmp(ring_result_str(RING_REFUSED + 1), "unknown result code") == 0,
          "no code after RING_REFUSED");
    char *json = NULL;
    size_t json_len = 0;
    CHECK(ring_to_json(NULL, &json, &json_len) == RING_NULL_ARGUMENT && json == NULL, "to_json of NULL");
    ring_string_free(NULL);
    return CHECK_SUMMARY("C errors");
}
