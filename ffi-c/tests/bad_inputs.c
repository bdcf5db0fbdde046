/* Every row of testdata/bad-inputs.json (docs/bad-inputs.md) through the C
 * ABI: the ring_result code each row records (with a message), or its answer,
 * compared as the Rust, Python and Node suites compare it: the owner's id,
 * the preference list, the fingerprint and key hash as decimal strings, the
 * node count of a derived ring, true for an op that returns nothing. Only
 * rows whose C column says "(no path ...)" are skipped; a row the runner
 * cannot express (an unknown op, option or key form) fails instead of being
 * run partly. Run under valgrind and AddressSanitizer by `make test-c`. */
#include <jansson.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "ring.h"
#include "check.h"

/* The bytes an id or key of the file stands for (see the file's "about"),
 * malloc'd into *out (never NULL), with their length; SIZE_MAX (and *out
 * NULL) for a form C cannot pass, such as {"utf16": [...]}. */
static size_t datum(json_t *value, uint8_t **out) {
    *out = NULL;
    if (json_is_string(value)) {
        size_t len = json_string_length(value);
        *out = malloc(len + 1);
        memcpy(*out, json_string_value(value), len);
        return len;
    }
    json_t *hex = json_object_get(value, "hex"), *fill = json_object_get(value, "fill");
    if (hex) {
        size_t len = json_string_length(hex) / 2;
        *out = malloc(len + 1);
        for (size_t i = 0; i < len; i++) sscanf(json_string_value(hex) + 2 * i, "%2hhx", &(*out)[i]);
        return len;
    }
    if (fill) {
        size_t len = (size_t)json_integer_value(json_object_get(value, "len"));
        unsigned byte;
        sscanf(json_string_value(fill), "%2x", &byte);
        *out = malloc(len + 1);
        memset(*out, (int)byte, len);
        return len;
    }
    if (json_is_true(json_object_get(value, "every_byte"))) {
        *out = malloc(256);
        for (int i = 0; i < 256; i++) (*out)[i] = (uint8_t)i;
        return 256;
    }
    return SIZE_MAX;
}

static double number(json_t *value) {
    return json_is_string(value) ? strtod(json_string_value(value), NULL) : json_number_value(value);
}

/* Whether node `index`'s id equals the expected id `want`. */
static int id_is(const ring_t *ring, size_t index, json_t *want) {
    uint8_t *bytes;
    size_t len = datum(want, &bytes);
    const char *id;
    size_t id_len;
    int same = len != SIZE_MAX && ring_node_id(ring, index, &id, &id_len) == RING_OK && id_len == len &&
               memcmp(id, bytes, len) == 0;
    free(bytes);
    return same;
}

/* Whether `value` (an answer of the file: a decimal string) is `number`. */
static int decimal_is(json_t *value, uint64_t number) {
    char text[24];
    snprintf(text, sizeof text, "%llu", (unsigned long long)number);
    return json_is_string(value) && strcmp(json_string_value(value), text) == 0;
}

/* Whether the row names option `key` in "c_unflagged": the options C passes
 * in ring_options_t without their `fields` bit (a value the library must
 * refuse, naming it, rather than ignore). */
static int unflagged(json_t *c, const char *key) {
    size_t i;
    json_t *name;
    json_array_foreach(json_object_get(c, "c_unflagged"), i, name) {
        if (strcmp(json_string_value(name), key) == 0) return 1;
    }
    return 0;
}

/* Everything build() allocates for one row. */
typedef struct {
    size_t count;
    const char **ids, **zones;
    size_t *id_lens, *zone_lens;
    double *weights;
    uint8_t **owned;
    size_t owned_count;
    uint32_t *haproxy_ids, *buckets, *removed;
} arrays_t;

static void arrays_free(arrays_t *a) {
    while (a->owned_count) free(a->owned[--a->owned_count]);
    free(a->owned);
    free(a->weights);
    free(a->zone_lens);
    free(a->id_lens);
    free(a->zones);
    free(a->ids);
    free(a->haproxy_ids);
    free(a->buckets);
    free(a->removed);
}

/* The index of the node whose id is `id` (a string), or SIZE_MAX. */
static size_t node_index(const arrays_t *a, const char *id) {
    for (size_t i = 0; i < a->count; i++)
        if (a->id_lens[i] == strlen(id) && memcmp(a->ids[i], id, a->id_lens[i]) == 0) return i;
    return SIZE_MAX;
}

/* Sets option `key` of the row to `value` in `options`, with its bit unless
 * the row lists it in "c_unflagged". Returns 0 when C cannot pass it. */
static int set_option(json_t *c, const char *key, json_t *value, arrays_t *a, ring_options_t *options) {
    static const struct {
        const char *key;
        uint32_t bit;
    } bits[] = {
        {"vnodes", RING_OPTION_VNODES},
        {"seed", RING_OPTION_SEED},
        {"table_size", RING_OPTION_TABLE_SIZE},
        {"distribution", RING_OPTION_DISTRIBUTION},
        {"key_hash", RING_OPTION_KEY_HASH},
        {"server_ids", RING_OPTION_SERVER_IDS},
        {"hash_tag", RING_OPTION_HASH_TAG},
        {"default_port", RING_OPTION_DEFAULT_PORT},
        {"min_ring_size", RING_OPTION_MIN_RING_SIZE},
        {"max_ring_size", RING_OPTION_MAX_RING_SIZE},
        {"hash_function", RING_OPTION_HASH_FUNCTION},
        {"endpoint_order", RING_OPTION_ENDPOINT_ORDER},
        {"avalanche", RING_OPTION_AVALANCHE},
        {"server_key", RING_OPTION_SERVER_KEY},
        {"haproxy_ids", RING_OPTION_HAPROXY_IDS},
        {"buckets", RING_OPTION_BUCKETS},
        {"removed_buckets", RING_OPTION_REMOVED_BUCKETS},
        {"score", RING_OPTION_SCORE},
    };
    if (strcmp(key, "algorithm") == 0) {
        options->algorithm = json_string_value(value);
        return json_is_string(value);
    }
    uint32_t bit = 0;
    for (size_t i = 0; i < sizeof bits / sizeof bits[0]; i++)
        if (strcmp(key, bits[i].key) == 0) bit = bits[i].bit;
    if (!bit) return 0;
    if (!unflagged(c, key)) options->fields |= bit;
#define WHOLE(field, type)                                    \
    if (strcmp(key, #field) == 0) {                           \
        options->field = (type)json_integer_value(value);     \
        return json_is_integer(value);                        \
    }
#define TEXT(field)                                           \
    if (strcmp(key, #field) == 0) {                           \
        options->field = json_string_value(value);            \
        return json_is_string(value);                         \
    }
    WHOLE(vnodes, uint32_t)
    WHOLE(seed, uint64_t)
    WHOLE(table_size, uint32_t)
    WHOLE(default_port, uint32_t)
    WHOLE(min_ring_size, uint64_t)
    WHOLE(max_ring_size, uint64_t)
    TEXT(distribution)
    TEXT(key_hash)
    TEXT(server_ids)
    TEXT(hash_tag)
    TEXT(hash_function)
    TEXT(endpoint_order)
    TEXT(server_key)
    TEXT(score)
#undef WHOLE
#undef TEXT
    if (strcmp(key, "avalanche") == 0) {
        options->avalanche = json_is_true(value) ? 1 : 0;
        return json_is_boolean(value);
    }
    if (strcmp(key, "removed_buckets") == 0) {
        size_t i, n = json_array_size(value);
        json_t *bucket;
        a->removed = calloc(n + 1, sizeof *a->removed);
        json_array_foreach(value, i, bucket) a->removed[i] = (uint32_t)json_integer_value(bucket);
        options->removed_buckets = a->removed;
        options->removed_bucket_count = n;
        return json_is_array(value);
    }
    /* haproxy_ids and buckets: an object from node id to number, as Python's
     * and Node's mappings; C takes one entry per node (0: HAProxy assigns). */
    uint32_t *per_node = calloc(a->count + 1, sizeof *per_node);
    const char *id;
    json_t *entry;
    int ok = json_is_object(value);
    json_object_foreach(value, id, entry) {
        size_t index = node_index(a, id);
        if (index == SIZE_MAX || !json_is_integer(entry)) ok = 0;
        else per_node[index] = (uint32_t)json_integer_value(entry);
    }
    if (strcmp(key, "haproxy_ids") == 0) {
        a->haproxy_ids = per_node;
        options->haproxy_ids = per_node;
    } else {
        a->buckets = per_node;
        options->buckets = per_node;
        ok = ok && json_object_size(value) == a->count; /* C has no "bucket left out" */
    }
    return ok;
}

/* Builds the case's ring through ring_new_with_options_sized (every option the row
 * gives is passed with its `fields` bit, except those in "c_unflagged"; an
 * option it leaves out has no bit, so gets its default; a node without a
 * weight has weight 1), or, for an op `from_json`, from its config text.
 * Returns the result code; *expressible is set to 0 when the row holds
 * something C cannot pass (then nothing is called). */
static ring_result build(json_t *c, ring_t **ring, int *expressible) {
    json_t *from_json = json_object_get(json_object_get(c, "op"), "from_json");
    if (from_json) return ring_new_from_json(json_string_value(from_json), json_string_length(from_json), ring);
    json_t *nodes = json_object_get(c, "nodes"), *options = json_object_get(c, "options");
    arrays_t a = {0};
    a.count = json_array_size(nodes);
    a.ids = calloc(a.count + 1, sizeof *a.ids);
    a.zones = calloc(a.count + 1, sizeof *a.zones);
    a.id_lens = calloc(a.count + 1, sizeof *a.id_lens);
    a.zone_lens = calloc(a.count + 1, sizeof *a.zone_lens);
    a.weights = calloc(a.count + 1, sizeof *a.weights);
    a.owned = calloc(2 * a.count + 1, sizeof *a.owned);
    for (size_t i = 0; i < a.count; i++) {
        json_t *node = json_array_get(nodes, i);
        json_t *id = json_is_string(node) ? node : json_object_get(node, "id");
        json_t *zone = json_is_string(node) ? NULL : json_object_get(node, "zone");
        json_t *weight = json_is_string(node) ? NULL : json_object_get(node, "weight");
        a.id_lens[i] = datum(id, &a.owned[a.owned_count]);
        a.ids[i] = (const char *)a.owned[a.owned_count++];
        if (a.id_lens[i] == SIZE_MAX || (weight && !json_is_number(weight) && !json_is_string(weight)))
            *expressible = 0;
        a.weights[i] = weight ? number(weight) : 1.0;
        if (zone) {
            a.zone_lens[i] = datum(zone, &a.owned[a.owned_count]);
            a.zones[i] = (const char *)a.owned[a.owned_count++];
            if (a.zone_lens[i] == SIZE_MAX) *expressible = 0;
        }
    }
    ring_options_t chosen = {0};
    const char *key;
    json_t *value;
    json_object_foreach(options, key, value) {
        if (!set_option(c, key, value, &a, &chosen)) *expressible = 0;
    }
    ring_result rc = RING_OK;
    if (*expressible)
        rc = ring_new_with_options_sized(a.ids, a.id_lens, a.weights, a.zones, a.zone_lens, a.count, &chosen,
                                         sizeof chosen, ring);
    arrays_free(&a);
    return rc;
}

/* Runs the case's operation; for an answer (`ok` not NULL), checks it as
 * the other bindings do. *expressible as in build(). */
static ring_result run(json_t *c, const char *name, json_t *ok, int *expressible) {
    ring_t *ring = NULL;
    ring_result rc = build(c, &ring, expressible);
    if (rc != RING_OK || !*expressible) return rc;
    json_t *op = json_object_get(c, "op");
    json_t *arg;
    uint8_t *key = NULL;
    if (json_object_size(op) > 1) {
        *expressible = 0;
    } else if (!op || json_object_get(op, "from_json")) {
        /* Built, answering true (Rust's answer for an op that returns nothing). */
        if (ok) CHECK(json_is_true(ok), "%s: built, but the answer is not true", name);
    } else if ((arg = json_object_get(op, "get"))) {
        size_t len = datum(arg, &key), index;
        if (len == SIZE_MAX) {
            *expressible = 0;
        } else {
            rc = ring_get_node(ring, key, len, &index, NULL, NULL);
            if (rc == RING_OK && ok) CHECK(id_is(ring, index, ok), "%s: wrong owner %zu", name, index);
        }
    } else if ((arg = json_object_get(op, "get_n"))) {
        size_t len = datum(json_array_get(arg, 0), &key), indices[16], written = 99;
        json_t *n = json_array_get(arg, 1);
        if (len == SIZE_MAX || !json_is_integer(n) || json_integer_value(n) > 16) {
            *expressible = 0;
        } else {
            rc = ring_get_nodes(ring, key, len, indices, (size_t)json_integer_value(n), &written);
            if (rc == RING_OK && ok) {
                CHECK(written == json_array_size(ok), "%s: %zu nodes listed", name, written);
                for (size_t i = 0; i < written && i < json_array_size(ok); i++)
                    CHECK(id_is(ring, indices[i], json_array_get(ok, i)), "%s: node %zu of the list", name, i);
            }
        }
    } else if ((arg = json_object_get(op, "get_by_hash"))) {
        size_t index;
        rc = ring_get_node_by_hash(ring, (uint64_t)json_integer_value(arg), &index);
        if (rc == RING_OK && ok) CHECK(id_is(ring, index, ok), "%s: wrong owner %zu of the hash", name, index);
    } else if ((arg = json_object_get(op, "remove")) || (arg = json_object_get(op, "add"))) {
        ring_t *derived = NULL;
        if (json_object_get(op, "remove"))
            rc = ring_without_node(ring, json_string_value(arg), json_string_length(arg), &derived);
        else
            rc = ring_with_node(ring, json_string_value(arg), json_string_length(arg), 1.0, NULL, 0, &derived);
        if (rc == RING_OK && ok)
            CHECK(json_is_integer(ok) && ring_node_count(derived) == (size_t)json_integer_value(ok),
                  "%s: the derived ring has %zu nodes", name, ring_node_count(derived));
        ring_free(derived);
    } else if (json_object_get(op, "fingerprint")) {
        uint64_t fingerprint = ring_fingerprint(ring);
        if (ok) CHECK(decimal_is(ok, fingerprint), "%s: fingerprint %llu", name, (unsigned long long)fingerprint);
    } else if ((arg = json_object_get(op, "hash_key"))) {
        /* C has no module-level hash: a ring with the seed hashes the key. */
        ring_t *seeded = NULL;
        ring_options_t seed = {0};
        seed.fields = RING_OPTION_SEED;
        seed.seed = (uint64_t)json_integer_value(json_array_get(arg, 1));
        const char *one = "a";
        size_t one_len = 1, len = datum(json_array_get(arg, 0), &key);
        if (len == SIZE_MAX || !json_is_integer(json_array_get(arg, 1))) {
            *expressible = 0;
        } else {
            rc = ring_new_with_options_sized(&one, &one_len, NULL, NULL, NULL, 1, &seed, sizeof seed, &seeded);
            if (rc == RING_OK) {
                uint64_t hash = ring_hash_key(seeded, key, len);
                if (ok) CHECK(decimal_is(ok, hash), "%s: hash %llu", name, (unsigned long long)hash);
            }
        }
        ring_free(seeded);
    } else if ((arg = json_object_get(op, "tracker")) || (arg = json_object_get(op, "release"))) {
        int release = json_object_get(op, "release") != NULL;
        ring_tracker_t *tracker = NULL;
        rc = ring_tracker_new(ring, release ? 0.1 : number(arg), &tracker);
        if (rc == RING_OK && release)
            rc = ring_tracker_release(tracker, json_string_value(arg), json_string_length(arg));
        /* The others answer a tracker's balance factor; C has no call that reads it. */
        if (rc == RING_OK && ok && !release) CHECK(0, "%s: C cannot read a tracker's balance factor", name);
        if (rc == RING_OK && ok && release) CHECK(json_is_true(ok), "%s: released, but the answer is not true", name);
        ring_tracker_free(tracker);
    } else {
        *expressible = 0;
    }
    free(key);
    ring_free(ring);
    return rc;
}

int main(void) {
    json_error_t error;
    json_t *file = json_load_file("testdata/bad-inputs.json", JSON_ALLOW_NUL, &error);
    if (!file) {
        fprintf(stderr, "cannot read testdata/bad-inputs.json: %s\n", error.text);
        return 1;
    }
    json_t *cases = json_object_get(file, "cases"), *c;
    size_t i, ran = 0, skipped = 0;
    CHECK(json_array_size(cases) >= 52, "the table lost rows");
    json_array_foreach(cases, i, c) {
        const char *name = json_string_value(json_object_get(c, "name"));
        json_t *expect = json_object_get(c, "expect");
        json_t *wanted = json_object_get(json_object_get(expect, "error"), "c");
        /* Rows no C call can express, such as a boolean weight, say why in the C column. */
        if (wanted && strncmp(json_string_value(wanted), "(no path", 8) == 0) {
            skipped++;
            continue;
        }
        int expressible = 1;
        ring_result rc = run(c, name, json_object_get(expect, "ok"), &expressible);
        CHECK(expressible, "%s (row %zu): the C runner cannot express this row; teach it, or say \"(no path: ...)\" "
              "in its C column", name, i);
        if (!expressible) continue;
        ran++;
        if (wanted) {
            const char *message = rc == RING_OK ? "the call succeeded" : ring_last_error();
            CHECK(message && *message, "%s: no message", name);
            CHECK(strcmp(ring_result_name(rc), json_string_value(wanted)) == 0, "%s: %s (%s), expected %s", name,
                  ring_result_name(rc), message ? message : "", json_string_value(wanted));
            /* A value passed without its bit is refused by name, bit included. */
            size_t u;
            json_t *field;
            json_array_foreach(json_object_get(c, "c_unflagged"), u, field) {
                char option[64], bit[64];
                snprintf(option, sizeof option, "`options.%s`", json_string_value(field));
                snprintf(bit, sizeof bit, "RING_OPTION_%s", json_string_value(field));
                for (char *p = bit; *p; p++) *p = (char)(*p >= 'a' && *p <= 'z' ? *p - 32 : *p);
                CHECK(rc != RING_OK && strstr(ring_last_error(), option) && strstr(ring_last_error(), bit),
                      "%s: the message names %s and %s: %s", name, option, bit, message);
            }
        } else {
            CHECK(rc == RING_OK, "%s: %s (%s)", name, ring_result_name(rc), ring_last_error());
        }
    }
    printf("bad_inputs: %zu rows, %zu run through C, %zu without a C path\n", json_array_size(cases), ran, skipped);
    CHECK(ran + skipped == json_array_size(cases), "every row is run or has no C path");
    CHECK(check_ring_calls >= ran, "the no-RING_PANIC wrapping of check.h counted %lu calls",
          (unsigned long)check_ring_calls);
    json_decref(file);
    return CHECK_SUMMARY("bad_inputs");
}
