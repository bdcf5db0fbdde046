/* The C surface on concrete rings: derivation, diffs, ownership, JSON
 * export and batch placement, with exact expected values. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "ring.h"

static int id_is(const char *id, size_t len, const char *want) { return len == strlen(want) && !memcmp(id, want, len); }

static int owner_is(const ring_t *ring, const char *key, const char *want) {
    size_t index;
    const char *id;
    size_t len;
    return ring_get_node(ring, (const uint8_t *)key, strlen(key), &index, &id, &len) == RING_OK && id_is(id, len, want);
}

int main(void) {
    const char *ids[] = {"cache-1", "cache-2", "cache-3"};
    size_t lens[] = {7, 7, 7};
    double weights[] = {1.0, 2.0, 1.0};
    ring_t *ring = NULL;
    CHECK(ring_new(ids, lens, weights, NULL, NULL, 3, 160, 0, &ring) == RING_OK, "ring_new");

    /* Ownership: exact shares that sum to 1, weight 2 owning about half. */
    double shares[3];
    CHECK(ring_ownership(ring, shares, 3) == RING_OK, "ownership");
    CHECK(fabs(shares[0] + shares[1] + shares[2] - 1.0) < 1e-12, "shares sum to 1");
    CHECK(shares[1] > 0.4 && shares[1] < 0.6, "weight 2 owns %f", shares[1]);

    /* Adding a node: only keys it now owns move; the diff says exactly which. */
    ring_t *grown = NULL;
    CHECK(ring_with_node(ring, "cache-4", 7, 1.0, "east", 4, &grown) == RING_OK, "with_node");
    CHECK(ring_node_count(grown) == 4 && ring_node_count(ring) == 3, "derivation leaves the old ring alone");
    double grown_shares[4];
    CHECK(ring_ownership(grown, grown_shares, 4) == RING_OK, "grown ownership");
    ring_diff_t *diff = NULL;
    CHECK(ring_diff(ring, grown, &diff) == RING_OK, "diff");
    CHECK(fabs(ring_diff_moved_share(diff) - grown_shares[3]) < 1e-12, "moved share = new node's share (%f vs %f)",
          ring_diff_moved_share(diff), grown_shares[3]);
    size_t flows = ring_diff_flow_count(diff), arcs = ring_diff_arc_count(diff);
    CHECK(flows == 3, "every old node donates (%zu flows)", flows);
    double flow_total = 0;
    for (size_t i = 0; i < flows; i++) {
        double share;
        const char *from, *to;
        size_t from_len, to_len;
        CHECK(ring_diff_flow(diff, i, &share, &from, &from_len, &to, &to_len) == RING_OK, "flow %zu", i);
        CHECK(id_is(to, to_len, "cache-4"), "flow %zu goes to the new node", i);
        flow_total += share;
    }
    CHECK(fabs(flow_total - ring_diff_moved_share(diff)) < 1e-12, "flows add up");
    CHECK(arcs > 100 && arcs <= 160, "%zu arcs", arcs);
    int moved_right = 1;
    for (int k = 0; k < 5000; k++) {
        char key[32];
        snprintf(key, sizeof key, "key-%d", k);
        size_t before, after;
        ring_get_node(ring, (const uint8_t *)key, strlen(key), &before, NULL, NULL);
        ring_get_node(grown, (const uint8_t *)key, strlen(key), &after, NULL, NULL);
        uint64_t hash = ring_hash_key(ring, (const uint8_t *)key, strlen(key));
        int in_arc = 0;
        for (size_t a = 0; a < arcs; a++) {
            uint64_t start, end;
            const char *from, *to;
            size_t from_len, to_len;
            ring_diff_arc(diff, a, &start, &end, &from, &from_len, &to, &to_len);
            if (start <= hash && hash <= end) in_arc = 1;
        }
        if ((before != after) != in_arc || (before != after && after != 3)) moved_right = 0;
    }
    CHECK(moved_right, "a key moves exactly when its hash is in a moved arc, and only to cache-4");
    ring_diff_free(diff);

    /* Removing and re-weighting. */
    ring_t *shrunk = NULL, *heavier = NULL, *drained = NULL;
    CHECK(ring_without_node(grown, "cache-4", 7, &shrunk) == RING_OK, "without_node");
    CHECK(ring_fingerprint(shrunk) == ring_fingerprint(ring), "remove after add restores the fingerprint");
    CHECK(ring_diff(ring, shrunk, &diff) == RING_OK && ring_diff_moved_share(diff) == 0.0, "and every placement");
    ring_diff_free(diff);
    CHECK(ring_with_weight(ring, "cache-1", 7, 3.0, &heavier) == RING_OK, "with_weight");
    double weight = 0;
    CHECK(ring_node_weight(heavier, 0, &weight) == RING_OK && weight == 3.0, "new weight");
    CHECK(ring_diff(ring, heavier, &diff) == RING_OK, "diff of re-weighting");
    for (size_t i = 0; i < ring_diff_flow_count(diff); i++) {
        double share;
        const char *from, *to;
        size_t from_len, to_len;
        ring_diff_flow(diff, i, &share, &from, &from_len, &to, &to_len);
        CHECK(id_is(to, to_len, "cache-1"), "raising a weight only moves keys to that node");
    }
    ring_diff_free(diff);
    CHECK(ring_with_weight(ring, "cache-2", 7, 0.0, &drained) == RING_OK, "drain a node");
    int none_on_drained = 1;
    for (int k = 0; k < 2000; k++) {
        char key[32];
        snprintf(key, sizeof key, "key-%d", k);
        if (owner_is(drained, key, "cache-2")) none_on_drained = 0;
    }
    CHECK(none_on_drained && ring_node_count(drained) == 3, "a drained node stays a member and owns nothing");

    /* JSON export round-trips to the same fingerprint and placement. */
    char *json = NULL;
    size_t json_len = 0;
    CHECK(ring_to_json(grown, &json, &json_len) == RING_OK && json_len == strlen(json), "to_json");
    CHECK(strstr(json, "\"zone\": \"east\"") != NULL, "zone exported: %s", json);
    ring_t *reread = NULL;
    CHECK(ring_new_from_json(json, json_len, &reread) == RING_OK, "from exported JSON");
    CHECK(ring_fingerprint(reread) == ring_fingerprint(grown), "fingerprint survives JSON");
    ring_string_free(json);

    /* Batch placement equals single lookups. */
    enum { N = 1000 };
    char storage[N][16];
    const uint8_t *keys[N];
    size_t key_lens[N], batch[N];
    for (int k = 0; k < N; k++) {
        key_lens[k] = (size_t)snprintf(storage[k], sizeof storage[k], "obj-%d", k);
        keys[k] = (const uint8_t *)storage[k];
    }
    CHECK(ring_get_node_batch(grown, keys, key_lens, N, batch, N) == RING_OK, "batch");
    int same = 1;
    for (int k = 0; k < N; k++) {
        size_t single;
        ring_get_node(grown, keys[k], key_lens[k], &single, NULL, NULL);
        if (single != batch[k]) same = 0;
    }
    CHECK(same, "batch placement equals single lookups");

    /* Preference lists with zones: the zoned node joins every list of 2 or more
     * when the others share no zone with it. */
    size_t list[4], count = 0;
    CHECK(ring_get_nodes(grown, (const uint8_t *)"user:1", 6, list, 4, &count) == RING_OK && count == 4, "get_nodes");
    CHECK(list[0] != list[1] && list[1] != list[2] && list[2] != list[3] && list[0] != list[3], "distinct");

    ring_free(reread);
    ring_free(drained);
    ring_free(heavier);
    ring_free(shrunk);
    ring_free(grown);
    ring_free(ring);
    return CHECK_SUMMARY("C API");
}
