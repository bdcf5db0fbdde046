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

/* Builds the case's ring, returning the result code. */
static ring_result build(json_t *c, ring_t **ring) {
    json_t *nodes = json_object_get(c, "nodes"), *options = json_object_get(c, "options");
    size_t count = json_array_size(nodes);
    const char *ids[8];
    size_t id_lens[8], zone_lens[8];
    double weights[8];
    const char *zones[8];
    uint8_t *owned[16];
    size_t owned_count = 0;
    for (size_t i = 0; i < count && i < 8; i++) {
        json_t *node = json_array_get(nodes, i);
        json_t *id = json_is_string(node) ? node : json_object_get(node, "id");
        json_t *zone = json_is_string(node) ? NULL : json_object_get(node, "zone");
        id_lens[i] = datum(id, &owned[owned_count]);
        ids[i] = (const char *)owned[owned_count++];
        weights[i] = json_is_string(node) ? 1.0 : number(json_object_get(node, "weight"));
        zones[i] = NULL;
        zone_lens[i] = 0;
        if (zone) {
            zone_lens[i] = datum(zone, &owned[owned_count]);
            zones[i] = (const char *)owned[owned_count++];
        }
    }
    json_t *algorithm = json_object_get(options, "algorithm");
    json_t *vnodes = json_object_get(options, "vnodes");
    ring_result rc;
    if (algorithm) {
        ring_options_t chosen = {0};
        chosen.algorithm = json_string_value(algorithm);
        chosen.seed = (uint64_t)json_integer_value(json_object_get(options, "seed"));
        chosen.table_size = (uint32_t)json_integer_value(json_object_get(options, "table_size"));
        rc = ring_new_with_options(ids, id_lens, weights, zones, zone_lens, count, &chosen, ring);
    } else {
        uint32_t points = vnodes ? (uint32_t)json_integer_value(vnodes) : 160;
        rc = ring_new(ids, id_lens, weights, zones, zone_lens, count, points, 0, ring);
    }
    while (owned_count) free(owned[--owned_count]);
    return rc;
}

/* Runs the case's operation; for an answer, checks it against `ok`. */
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
        if (rc == RING_OK) CHECK(id_is(ring, index, ok), "%s: wrong owner %zu", name, index);
        free(key);
    } else if ((arg = json_object_get(op, "get_n"))) {
        uint8_t *key;
        size_t len = datum(json_array_get(arg, 0), &key), indices[16], written = 99;
        size_t n = (size_t)json_integer_value(json_array_get(arg, 1));
        rc = ring_get_nodes(ring, key, len, indices, n, &written);
        if (rc == RING_OK) {
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
    CHECK(json_array_size(cases) >= 30, "the table lost rows");
    json_array_foreach(cases, i, c) {
        const char *name = json_string_value(json_object_get(c, "name"));
        json_t *expect = json_object_get(c, "expect");
        json_t *wanted = json_object_get(json_object_get(expect, "error"), "c");
        ring_result rc = run(c, name, json_object_get(expect, "ok"));
        if (wanted) {
            const char *message = ring_last_error();
            CHECK(message && *message, "%s: no message", name);
            CHECK(strcmp(ring_result_name(rc), json_string_value(wanted)) == 0, "%s: %s (%s), expected %s", name,
                  ring_result_name(rc), message ? message : "", json_string_value(wanted));
        } else {
            CHECK(rc == RING_OK, "%s: %u (%s)", name, rc, ring_last_error());
        }
    }
    json_decref(file);
    return CHECK_SUMMARY("bad_inputs");
}
