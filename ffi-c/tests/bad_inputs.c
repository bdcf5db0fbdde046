/* Every row of testdata/bad-inputs.json (docs/bad-inputs.md) through the C
 * ABI: the ring_result code each row records, or its answer. Run under
 * valgrind and AddressSanitizer by `make test-c`. */
#include <jansson.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "ring.h"
#include "check.h"

/* The bytes an id or key of the file stands for (see the file's "about"),
 * malloc'd into *out (never NULL), with their length. */
static size_t datum(json_t *value, uint8_t **out) {
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
    *out = malloc(256); /* {"every_byte": true} */
    for (int i = 0; i < 256; i++) (*out)[i] = (uint8_t)i;
    return 256;
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
    int same = ring_node_id(ring, index, &id, &id_len) == RING_OK && id_len == len && memcmp(id, bytes, len) == 0;
    free(bytes);
    return same;
}

/* Builds the case's ring through ring_new_with_options, returning the result
 * code: each option the row gives is passed with its `fields` bit set, and an
 * option it leaves out has no bit (so gets its default). A node without a
 * weight has weight 1. An op `from_json` builds from its config text instead. */
static ring_result build(json_t *c, ring_t **ring) {
    json_t *from_json = json_object_get(json_object_get(c, "op"), "from_json");
    if (from_json) return ring_new_from_json(json_string_value(from_json), json_string_length(from_json), ring);
    json_t *nodes = json_object_get(c, "nodes"), *options = json_object_get(c, "options");
    size_t count = json_array_size(nodes);
    const char **ids = calloc(count + 1, sizeof *ids), **zones = calloc(count + 1, sizeof *zones);
    size_t *id_lens = calloc(count + 1, sizeof *id_lens), *zone_lens = calloc(count + 1, sizeof *zone_lens);
    double *weights = calloc(count + 1, sizeof *weights);
    uint8_t **owned = calloc(2 * count + 1, sizeof *owned);
    size_t owned_count = 0;
    for (size_t i = 0; i < count; i++) {
        json_t *node = json_array_get(nodes, i);
        json_t *id = json_is_string(node) ? node : json_object_get(node, "id");
        json_t *zone = json_is_string(node) ? NULL : json_object_get(node, "zone");
        json_t *weight = json_is_string(node) ? NULL : json_object_get(node, "weight");
        id_lens[i] = datum(id, &owned[owned_count]);
        ids[i] = (const char *)owned[owned_count++];
        weights[i] = weight ? number(weight) : 1.0;
        if (zone) {
            zone_lens[i] = datum(zone, &owned[owned_count]);
            zones[i] = (const char *)owned[owned_count++];
        }
    }
    ring_options_t chosen = {0};
    json_t *value;
    if ((value = json_object_get(options, "algorithm"))) chosen.algorithm = json_string_value(value);
    if ((value = json_object_get(options, "vnodes"))) {
        chosen.fields |= RING_OPTION_VNODES;
        chosen.vnodes = (uint32_t)json_integer_value(value);
    }
    if ((value = json_object_get(options, "seed"))) {
        chosen.fields |= RING_OPTION_SEED;
        chosen.seed = (uint64_t)json_integer_value(value);
    }
    if ((value = json_object_get(options, "table_size"))) {
        chosen.fields |= RING_OPTION_TABLE_SIZE;
        chosen.table_size = (uint32_t)json_integer_value(value);
    }
    ring_result rc = ring_new_with_options(ids, id_lens, weights, zones, zone_lens, count, &chosen, ring);
    while (owned_count) free(owned[--owned_count]);
    free(owned);
    free(weights);
    free(zone_lens);
    free(id_lens);
    free(zones);
    free(ids);
    return rc;
}

/* Whether `value` (an answer of the file: a decimal string) is `number`. */
static int decimal_is(json_t *value, uint64_t number) {
    char text[24];
    snprintf(text, sizeof text, "%llu", (unsigned long long)number);
    return json_is_string(value) && strcmp(json_string_value(value), text) == 0;
}

/* Runs the case's operation; for an answer (`ok` not NULL), checks it. */
static ring_result run(json_t *c, const char *name, json_t *ok) {
    ring_t *ring = NULL;
    ring_result rc = build(c, &ring);
    if (rc != RING_OK) return rc;
    json_t *op = json_object_get(c, "op");
    json_t *arg;
    if ((arg = json_object_get(op, "get"))) {
        uint8_t *key;
        size_t len = datum(arg, &key), index;
        rc = ring_get_node(ring, key, len, &index, NULL, NULL);
        if (rc == RING_OK && ok) CHECK(id_is(ring, index, ok), "%s: wrong owner %zu", name, index);
        free(key);
    } else if ((arg = json_object_get(op, "get_n"))) {
        uint8_t *key;
        size_t len = datum(json_array_get(arg, 0), &key), indices[16], written = 99;
        size_t n = (size_t)json_integer_value(json_array_get(arg, 1));
        rc = ring_get_nodes(ring, key, len, indices, n, &written);
        if (rc == RING_OK && ok) {
            CHECK(written == json_array_size(ok), "%s: %zu nodes listed", name, written);
            for (size_t i = 0; i < written && i < json_array_size(ok); i++)
                CHECK(id_is(ring, indices[i], json_array_get(ok, i)), "%s: node %zu of the list", name, i);
        }
        free(key);
    } else if ((arg = json_object_get(op, "get_by_hash"))) {
        size_t index;
        rc = ring_get_node_by_hash(ring, (uint64_t)json_integer_value(arg), &index);
    } else if ((arg = json_object_get(op, "remove"))) {
        ring_t *derived = NULL;
        rc = ring_without_node(ring, json_string_value(arg), json_string_length(arg), &derived);
        ring_free(derived);
    } else if ((arg = json_object_get(op, "add"))) {
        ring_t *derived = NULL;
        rc = ring_with_node(ring, json_string_value(arg), json_string_length(arg), 1.0, NULL, 0, &derived);
        ring_free(derived);
    } else if (json_object_get(op, "fingerprint")) {
        uint64_t fingerprint = ring_fingerprint(ring);
        if (ok) CHECK(decimal_is(ok, fingerprint), "%s: fingerprint %llu", name, (unsigned long long)fingerprint);
    } else if (json_object_get(op, "from_json")) {
        if (ok) CHECK(json_is_true(ok), "%s: built, but the answer is not true", name);
    } else if ((arg = json_object_get(op, "hash_key"))) {
        /* C has no module-level hash: a ring with the seed hashes the key. */
        ring_t *seeded = NULL;
        ring_options_t seed = {0};
        seed.fields = RING_OPTION_SEED;
        seed.seed = (uint64_t)json_integer_value(json_array_get(arg, 1));
        const char *one = "a";
        size_t one_len = 1;
        rc = ring_new_with_options(&one, &one_len, NULL, NULL, NULL, 1, &seed, &seeded);
        if (rc == RING_OK) {
            uint8_t *key;
            size_t len = datum(json_array_get(arg, 0), &key);
            uint64_t hash = ring_hash_key(seeded, key, len);
            if (ok) CHECK(decimal_is(ok, hash), "%s: hash %llu", name, (unsigned long long)hash);
            free(key);
        }
        ring_free(seeded);
    } else if ((arg = json_object_get(op, "tracker")) || (arg = json_object_get(op, "release"))) {
        int release = json_object_get(op, "release") != NULL;
        ring_tracker_t *tracker = NULL;
        rc = ring_tracker_new(ring, release ? 0.1 : number(arg), &tracker);
        if (rc == RING_OK && release) rc = ring_tracker_release(tracker, json_string_value(arg), json_string_length(arg));
        ring_tracker_free(tracker);
    }
    ring_free(ring);
    return rc;
}

int main(void) {
    json_error_t error;
    json_t *file = json_load_file("testdata/bad-inputs.json", 0, &error);
    if (!file) {
        fprintf(stderr, "cannot read testdata/bad-inputs.json: %s\n", error.text);
        return 1;
    }
    json_t *cases = json_object_get(file, "cases"), *c;
    size_t i;
    size_t skipped = 0;
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
        ring_result rc = run(c, name, json_object_get(expect, "ok"));
        if (wanted) {
            const char *message = rc == RING_OK ? "the call succeeded" : ring_last_error();
            CHECK(message && *message, "%s: no message", name);
            CHECK(strcmp(ring_result_name(rc), json_string_value(wanted)) == 0, "%s: %s (%s), expected %s", name,
                  ring_result_name(rc), message ? message : "", json_string_value(wanted));
        } else {
            CHECK(rc == RING_OK, "%s: %u (%s)", name, rc, ring_last_error());
        }
    }
    printf("bad_inputs: %zu rows, %zu without a C path\n", json_array_size(cases), skipped);
    json_decref(file);
    return CHECK_SUMMARY("bad_inputs");
}
