// Tests of include/ring.hpp, every method: testdata/vectors.json through the
// wrapper (owners, preference lists, hashes, lookups by hash, batches,
// fingerprints), each answer also compared with the C API's own; RAII
// reference counting; diffs, ownership and trackers against the C calls;
// leases that give their load back; errors as shardring::Error.
// Usage: cpp-wrapper testdata/vectors.json (run under valgrind by make test-c).
#include <algorithm>
#include <atomic>
#include <unistd.h>
#include <jansson.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "ring.hpp"

// Each handle class owns its C handle alone: moved, never copied.
template <typename T>
constexpr bool move_only = !std::is_copy_constructible_v<T> && !std::is_copy_assignable_v<T> &&
                           std::is_nothrow_move_constructible_v<T> && std::is_nothrow_move_assignable_v<T>;
static_assert(move_only<shardring::HotKeys> && move_only<shardring::HotSet> && move_only<shardring::NearCache> &&
              move_only<shardring::Diff> && move_only<shardring::LoadTracker> && move_only<shardring::Transition> &&
              move_only<shardring::Follower> && move_only<shardring::Lease>);

static int passed, failed;
#define CHECK(cond, ...)                                                \
    do {                                                                \
        if (cond) {                                                     \
            passed++;                                                   \
        } else {                                                        \
            failed++;                                                   \
            std::fprintf(stderr, "FAIL %s:%d: ", __FILE__, __LINE__);   \
            std::fprintf(stderr, __VA_ARGS__);                          \
            std::fputc('\n', stderr);                                   \
        }                                                               \
    } while (0)

template <typename F>
static ring_result error_code(F &&call) {
    try {
        call();
    } catch (const shardring::Error &e) {
        return e.code();
    }
    return RING_OK;
}

static std::string text(json_t *value) { return std::string(json_string_value(value), json_string_length(value)); }

static std::string unhex(const char *hex) {
    std::string out;
    for (size_t i = 0; hex[i] && hex[i + 1]; i += 2) out.push_back((char)std::strtoul(std::string(hex + i, 2).c_str(), nullptr, 16));
    return out;
}

static uint64_t hex64(json_t *value) { return std::strtoull(json_string_value(value), nullptr, 16); }

/* One case of the vector file: the ring built three ways (JSON config,
 * Options, and for "ring" the vnodes/seed constructor) places every lookup as
 * recorded and as the C API does. */
static void run_vector(json_t *c) {
    const char *name = json_string_value(json_object_get(c, "name"));
    json_t *config = json_object_get(c, "config");
    char *config_text = json_dumps(config, JSON_COMPACT);
    shardring::Ring from_json = shardring::Ring::from_json(config_text);
    std::free(config_text);

    std::vector<shardring::NodeSpec> nodes;
    std::vector<uint32_t> haproxy_ids, buckets;
    bool listed_slots = false, any_haproxy_id = false, any_bucket = false;
    size_t i;
    json_t *node;
    json_array_foreach(json_object_get(config, "nodes"), i, node) {
        json_t *zone = json_object_get(node, "zone");
        nodes.emplace_back(text(json_object_get(node, "id")), json_number_value(json_object_get(node, "weight")),
                           zone ? std::optional<std::string>(text(zone)) : std::nullopt);
        // Listed slots and nginx down marks exist only in configs.
        listed_slots |= json_object_get(node, "slots") != nullptr || json_object_get(node, "down") != nullptr;
        json_t *puid = json_object_get(node, "haproxy_id");
        haproxy_ids.push_back(puid ? (uint32_t)json_integer_value(puid) : 0);
        any_haproxy_id |= puid != nullptr;
        json_t *bucket = json_object_get(node, "bucket");
        buckets.push_back(bucket ? (uint32_t)json_integer_value(bucket) : 0);
        any_bucket |= bucket != nullptr;
    }
    std::string algorithm = json_string_value(json_object_get(config, "algorithm"));
    shardring::Options options;
    options.algorithm = algorithm;
    if (json_t *v = json_object_get(config, "vnodes")) options.vnodes = (uint32_t)json_integer_value(v);
    if (json_t *v = json_object_get(config, "seed")) options.seed = (uint64_t)json_integer_value(v);
    if (json_t *v = json_object_get(config, "table_size")) options.table_size = (uint32_t)json_integer_value(v);
    if (json_t *v = json_object_get(config, "distribution")) options.distribution = text(v);
    if (json_t *v = json_object_get(config, "key_hash")) options.key_hash = text(v);
    if (json_t *v = json_object_get(config, "server_ids")) options.server_ids = text(v);
    if (json_t *v = json_object_get(config, "hash_tag")) options.hash_tag = text(v);
    if (json_t *v = json_object_get(config, "default_port")) options.default_port = (uint16_t)json_integer_value(v);
    if (json_t *v = json_object_get(config, "min_ring_size")) options.min_ring_size = (uint64_t)json_integer_value(v);
    if (json_t *v = json_object_get(config, "max_ring_size")) options.max_ring_size = (uint64_t)json_integer_value(v);
    if (json_t *v = json_object_get(config, "hash_function")) options.hash_function = text(v);
    if (json_t *v = json_object_get(config, "endpoint_order")) options.endpoint_order = text(v);
    if (json_t *v = json_object_get(config, "avalanche")) options.avalanche = json_is_true(v);
    if (json_t *v = json_object_get(config, "server_key")) options.server_key = text(v);
    if (json_t *v = json_object_get(config, "score")) options.score = text(v);
    if (any_haproxy_id) options.haproxy_ids = haproxy_ids;
    if (any_bucket) options.buckets = buckets;
    if (json_t *removed = json_object_get(config, "removed_buckets")) {
        options.removed_buckets.emplace();
        size_t r;
        json_t *bucket;
        json_array_foreach(removed, r, bucket) options.removed_buckets->push_back((uint32_t)json_integer_value(bucket));
    }
    // A parameter without a field of its own goes through Options::params,
    // so a new one needs no line here.
    static const std::vector<std::string> fields = {
        "format_version", "nodes",         "algorithm",     "vnodes",        "seed",           "table_size",
        "distribution",   "key_hash",      "server_ids",    "hash_tag",      "default_port",   "min_ring_size",
        "max_ring_size",  "hash_function", "endpoint_order", "avalanche",    "server_key",     "score",
        "removed_buckets",
    };
    json_t *rest = json_object();
    const char *key;
    json_t *value;
    json_object_foreach(config, key, value) {
        if (std::find(fields.begin(), fields.end(), key) == fields.end()) json_object_set(rest, key, value);
    }
    if (json_object_size(rest) > 0) {
        char *rest_text = json_dumps(rest, JSON_COMPACT);
        options.params = rest_text;
        free(rest_text);
    }
    json_decref(rest);
    // Listed slot ranges exist only in configs.
    shardring::Ring ring = listed_slots ? from_json : shardring::Ring(nodes, options);
    if (algorithm == "ring") {
        shardring::Ring plain(nodes, *options.vnodes, *options.seed);
        CHECK(plain.fingerprint() == ring.fingerprint(), "%s: the vnodes/seed constructor", name);
    }

    uint64_t fingerprint = hex64(json_object_get(c, "fingerprint"));
    CHECK(ring.fingerprint() == fingerprint && from_json.fingerprint() == fingerprint, "%s: fingerprint", name);
    CHECK(ring.fingerprint() == ring_fingerprint(ring.handle()), "%s: fingerprint as C gives it", name);
    CHECK(ring.fingerprint_hex() == json_string_value(json_object_get(c, "fingerprint")), "%s: fingerprint text %s",
          name, ring.fingerprint_hex().c_str());
    CHECK(ring.algorithm() == algorithm, "%s: algorithm", name);
    CHECK(ring.size() == json_array_size(json_object_get(config, "nodes")), "%s: size", name);
    for (size_t n = 0; n < ring.size() && !listed_slots; n++) {
        CHECK(ring.node_id(n) == nodes[n].id && ring.node_weight(n) == nodes[n].weight, "%s: node %zu", name, n);
    }
    CHECK(shardring::Ring::from_json(ring.to_json()).fingerprint() == fingerprint, "%s: to_json round trip", name);

    json_t *by_hash;
    json_array_foreach(json_object_get(c, "hash_lookups"), i, by_hash) {
        uint64_t hash = hex64(json_object_get(by_hash, "hash"));
        std::string owner = text(json_object_get(by_hash, "owner"));
        size_t c_index = (size_t)-1;
        CHECK(ring_get_node_by_hash(ring.handle(), hash, &c_index) == RING_OK, "%s: C by hash", name);
        CHECK(ring.get_by_hash(hash) == owner && ring.get_index_by_hash(hash) == c_index,
              "%s: owner of hash %016llx", name, (unsigned long long)hash);
    }

    std::vector<std::string> keys;
    std::vector<size_t> owners;
    json_t *lookup;
    json_array_foreach(json_object_get(c, "lookups"), i, lookup) {
        std::string key = unhex(json_string_value(json_object_get(lookup, "key_hex")));
        std::string owner = text(json_object_get(lookup, "owner"));
        CHECK(ring.hash_key(key) == hex64(json_object_get(lookup, "key_hash")), "%s: key %zu hash", name, i);
        CHECK(ring.hash_key(key) == ring_hash_key(ring.handle(), (const uint8_t *)key.data(), key.size()),
              "%s: key %zu hash as C gives it", name, i);
        size_t c_index = (size_t)-1;
        ring_get_node(ring.handle(), (const uint8_t *)key.data(), key.size(), &c_index, nullptr, nullptr);
        CHECK(ring.get(key) == owner && ring.get_index(key) == c_index && from_json.get(key) == owner,
              "%s: key %zu owner, want %s", name, i, owner.c_str());

        json_t *want = json_object_get(lookup, "preference");
        size_t n = (size_t)json_integer_value(json_object_get(lookup, "n"));
        std::vector<std::string_view> list = ring.get_n(key, n);
        std::vector<size_t> indices = ring.get_n_indices(key, n);
        std::vector<size_t> c_list(n + 1);
        size_t c_count = 0;
        ring_get_nodes(ring.handle(), (const uint8_t *)key.data(), key.size(), c_list.data(), n, &c_count);
        c_list.resize(c_count);
        bool same = list.size() == json_array_size(want) && indices == c_list;
        for (size_t k = 0; same && k < list.size(); k++) same = list[k] == text(json_array_get(want, k));
        CHECK(same, "%s: key %zu preference list (n=%zu)", name, i, n);
        keys.push_back(key);
        owners.push_back(c_index);
    }
    CHECK(ring.get_batch(keys) == owners, "%s: batch of %zu keys", name, keys.size());

    std::vector<double> shares = ring.ownership();
    std::vector<double> c_shares(ring.size());
    CHECK(ring_ownership(ring.handle(), c_shares.data(), c_shares.size()) == RING_OK && shares == c_shares,
          "%s: ownership as C gives it", name);
}

/* Diff, flows and arcs against the C calls on the same two rings. */
static void check_diff(const shardring::Ring &before, const shardring::Ring &after, const char *what) {
    shardring::Diff diff = shardring::diff(before, after);
    ring_diff_t *c_diff = nullptr;
    CHECK(ring_diff(before.handle(), after.handle(), &c_diff) == RING_OK, "%s: C diff", what);
    CHECK(diff.moved_share() == ring_diff_moved_share(c_diff), "%s: moved share", what);
    std::vector<shardring::Flow> flows = diff.flows();
    std::vector<shardring::Arc> arcs = diff.arcs();
    CHECK(flows.size() == ring_diff_flow_count(c_diff) && diff.flow_count() == flows.size(), "%s: flows", what);
    CHECK(arcs.size() == ring_diff_arc_count(c_diff) && diff.arc_count() == arcs.size(), "%s: arcs", what);
    for (size_t i = 0; i < flows.size(); i++) {
        double share;
        const char *from, *to;
        size_t from_len, to_len;
        ring_diff_flow(c_diff, i, &share, &from, &from_len, &to, &to_len);
        CHECK(flows[i].share == share && flows[i].from == std::string_view(from, from_len) &&
                  flows[i].to == std::string_view(to, to_len) && diff.flow(i).share == share,
              "%s: flow %zu", what, i);
    }
    for (size_t i = 0; i < arcs.size(); i++) {
        uint64_t start, end;
        const char *from, *to;
        size_t from_len, to_len;
        ring_diff_arc(c_diff, i, &start, &end, &from, &from_len, &to, &to_len);
        CHECK(arcs[i].start == start && arcs[i].end == end && arcs[i].from == std::string_view(from, from_len) &&
                  arcs[i].to == std::string_view(to, to_len) && diff.arc(i).end == end,
              "%s: arc %zu", what, i);
    }
    ring_diff_free(c_diff);
}

static void exact_values() {
    // The bad-input table's answers (testdata/bad-inputs.json) on a, b, c.
    shardring::Ring abc({{"a"}, {"b"}, {"c"}});
    CHECK(abc.get("") == "b", "empty key: b");
    std::string every_byte;
    for (int b = 0; b < 256; b++) every_byte.push_back((char)b);
    CHECK(abc.get(every_byte) == "a", "key of every byte value: a");
    auto list = abc.get_n("k", 10);
    CHECK(list.size() == 3 && list[0] == "c" && list[1] == "b" && list[2] == "a", "get_n(k, 10) = c, b, a");
    CHECK(abc.get_n("k", 0).empty() && abc.get_n_indices("k", 0).empty(), "get_n(k, 0) is empty");
    // The empty key's hash under seed 0 (core/SPEC.md, Hash).
    CHECK(abc.hash_key("") == 0x2d06800538d394c2ULL, "H(\"\") = 0x2d06800538d394c2");
    CHECK(abc.get_index_by_hash(abc.hash_key("user:42")) == abc.get_index("user:42"), "by hash = by key");
    CHECK(abc.node_weight(1) == 1.0 && abc.node_id(2) == "c", "node accessors");
    std::vector<double> shares = abc.ownership();
    CHECK(shares.size() == 3 && std::fabs(shares[0] + shares[1] + shares[2] - 1.0) < 1e-12, "shares sum to 1");

    // Options: left out = default, given = passed as given.
    CHECK(shardring::Ring({{"a"}, {"b"}, {"c"}}, shardring::Options{}).fingerprint() == abc.fingerprint(),
          "no options = ring, 160 vnodes, seed 0");
    shardring::Options seeded;
    seeded.vnodes = 7;
    seeded.seed = 99;
    CHECK(shardring::Ring({{"a"}, {"b"}, {"c"}}, seeded).fingerprint() ==
              shardring::Ring({{"a"}, {"b"}, {"c"}}, 7, 99).fingerprint(),
          "vnodes 7, seed 99 through Options");
    shardring::Options zero_vnodes;
    zero_vnodes.vnodes = 0;
    CHECK(error_code([&] { shardring::Ring({{"a"}}, zero_vnodes); }) == RING_ZERO_VNODES, "vnodes 0 is no default");
    CHECK(error_code([] { shardring::Ring({{"a"}}, 0); }) == RING_ZERO_VNODES, "vnodes 0 in the constructor");
    CHECK(error_code([] { shardring::Ring::with_algorithm({{"a"}}, "maglev", std::nullopt, 0); }) ==
              RING_INVALID_TABLE_SIZE,
          "table size 0 is no default");
    shardring::Ring maglev = shardring::Ring::with_algorithm({{"a"}, {"b"}, {"c"}}, "maglev", 0, 251);
    CHECK(maglev.algorithm() == "maglev" && maglev.to_json().find("\"table_size\": 251") != std::string::npos,
          "Maglev ring with a table size");
    CHECK(shardring::Ring::with_algorithm({{"a"}, {"b"}}, "maglev").to_json().find("\"table_size\": 65537") !=
              std::string::npos,
          "Maglev default table");
    CHECK(error_code([] { shardring::Ring::with_algorithm({{"a"}}, "maglev", 0, 250); }) == RING_INVALID_TABLE_SIZE,
          "non-prime table throws");
    CHECK(error_code([] { shardring::Ring::with_algorithm({{"a"}}, "chord"); }) == RING_INVALID_CONFIG,
          "unknown algorithm throws");
    shardring::Ring slots = shardring::Ring::with_algorithm({{"a"}, {"b"}}, "slots");
    CHECK(slots.get_by_hash(16383) == "b" && slots.get_index_by_hash(0) == 0, "slots by hash");
    CHECK(error_code([&] { slots.get_by_hash(16384); }) == RING_HASH_OUT_OF_RANGE, "slot 16384 throws");
}

static void references_and_derivations() {
    shardring::Ring ring({{"a", 1.0}, {"b", 2.0, "east"}, {"c"}});
    std::string_view owner = ring.get("user:42");
    CHECK(owner == ring.node_id(ring.get_index("user:42")), "get agrees with get_index");
    // Copies share the handle; ids stay valid while any copy lives.
    std::string_view id;
    {
        shardring::Ring copy = ring;
        CHECK(copy.handle() == ring.handle(), "copy shares the handle");
        shardring::Ring moved = std::move(copy);
        id = moved.get("k");
        shardring::Ring assigned = shardring::Ring(std::vector<shardring::NodeSpec>{"z"});
        assigned = moved;
        CHECK(assigned.handle() == ring.handle(), "assignment shares the handle");
    }
    CHECK(id == ring.get("k"), "id valid after copies are gone");

    shardring::Ring grown = ring.with_node({"d", 1.0, "west"});
    int only_to_d = 1;
    for (int k = 0; k < 3000; k++) {
        std::string key = "key-" + std::to_string(k);
        if (ring.get(key) != grown.get(key) && grown.get(key) != "d") only_to_d = 0;
    }
    CHECK(only_to_d && grown.size() == 4 && grown.node_id(3) == "d", "adding d moves keys only to d");
    CHECK(grown.to_json().find("\"zone\": \"west\"") != std::string::npos, "with_node keeps the zone");
    CHECK(grown.without_node("d").fingerprint() == ring.fingerprint(), "remove restores");
    CHECK(shardring::Ring::from_json(grown.to_json()).fingerprint() == grown.fingerprint(), "JSON round trip");
    shardring::Ring drained = ring.with_weight("a", 0.0);
    CHECK(drained.get_n("k", 3).size() == 2 && drained.node_weight(0) == 0.0, "drained node leaves lists");

    shardring::Diff added = shardring::diff(ring, grown);
    std::vector<double> grown_shares = grown.ownership();
    CHECK(std::fabs(added.moved_share() - grown_shares[3]) < 1e-12, "moved share = d's share");
    bool to_d = added.flow_count() == 3;
    for (const shardring::Flow &flow : added.flows()) to_d = to_d && flow.to == "d" && flow.share > 0;
    CHECK(to_d, "every old node gives to d");
    bool arcs_to_d = added.arc_count() > 100;
    for (const shardring::Arc &arc : added.arcs()) arcs_to_d = arcs_to_d && arc.to == "d" && arc.start <= arc.end;
    CHECK(arcs_to_d, "every moved arc goes to d (%zu arcs)", added.arc_count());
    check_diff(ring, grown, "add d");
    check_diff(ring, drained, "drain a");
    check_diff(shardring::Ring::with_algorithm({{"a"}, {"b"}}, "jump"),
               shardring::Ring::with_algorithm({{"a"}, {"b"}, {"c"}}, "jump"), "jump 2 -> 3");
    // Memento: removing a middle node moves only its keys, and the history
    // (Options::removed_buckets and buckets) rebuilds the same ring.
    shardring::Ring memento = shardring::Ring::with_algorithm({{"m0"}, {"m1"}, {"m2"}, {"m3"}}, "memento");
    shardring::Ring shrunk = memento.without_node("m1");
    int only_m1 = 1;
    for (int k = 0; k < 3000; k++) {
        std::string key = "key-" + std::to_string(k);
        if (memento.get(key) != shrunk.get(key) && memento.get(key) != "m1") only_m1 = 0;
    }
    CHECK(only_m1, "memento: removing m1 moves only m1's keys");
    shardring::Options history;
    history.algorithm = "memento";
    history.removed_buckets = std::vector<uint32_t>{1};
    history.buckets = std::vector<uint32_t>{0, 2, 3};
    CHECK(shardring::Ring({{"m0"}, {"m2"}, {"m3"}}, history).fingerprint() == shrunk.fingerprint(),
          "memento: the history rebuilds the ring");
    history.buckets = std::vector<uint32_t>{0};
    CHECK(error_code([&] { shardring::Ring({{"m0"}, {"m2"}, {"m3"}}, history); }) == RING_INVALID_CONFIG,
          "memento: one bucket per node");
    shardring::Diff moved_diff = shardring::Diff(ring, ring);
    shardring::Diff other = std::move(moved_diff);
    CHECK(other.moved_share() == 0.0 && other.arc_count() == 0 && other.flows().empty(), "diff with itself");
    CHECK(error_code([&] { other.arc(0); }) == RING_INDEX_OUT_OF_RANGE, "arc 0 of an empty diff");
    CHECK(error_code([&] { other.flow(0); }) == RING_INDEX_OUT_OF_RANGE, "flow 0 of an empty diff");
    CHECK(error_code([&] { shardring::diff(ring, shardring::Ring({{"a"}}, 160, 1)); }) == RING_SEED_MISMATCH,
          "diff across seeds");
    CHECK(error_code([&] { shardring::diff(ring, shardring::Ring::with_algorithm({{"a"}}, "jump")); }) ==
              RING_ALGORITHM_MISMATCH,
          "diff across algorithms");
}

static void trackers() {
    {
        shardring::Options options;
        options.algorithm = "haproxy";
        shardring::Ring servers({{"a", 1.0}, {"b", 2.0}, {"c", 1.0}}, options);
        shardring::LoadTracker bounded = shardring::LoadTracker::haproxy(servers, 125);
        shardring::Lease lease = bounded.acquire("k");
        CHECK(lease.node() == servers.get("k"), "the first request goes to the key's server");
        bool refused = false;
        try {
            (void)shardring::LoadTracker::haproxy(servers, 100);
        } catch (const shardring::Error &e) {
            refused = e.code() == RING_INVALID_CONFIG;
        }
        CHECK(refused, "factor 100 is RING_INVALID_CONFIG");
    }
    shardring::Ring ring({{"a"}, {"b"}, {"c"}});
    ring_tracker_t *c_tracker = nullptr;
    CHECK(ring_tracker_new(ring.handle(), 0.1, &c_tracker) == RING_OK, "C tracker");
    shardring::LoadTracker tracker(ring, 0.1);
    {
        std::vector<shardring::Lease> leases;
        bool same = true;
        for (int k = 0; k < 200; k++) {
            std::string key = "req-" + std::to_string(k % 7);  // hot keys, so the bound makes probes
            size_t index;
            const char *id;
            size_t len;
            uint32_t probes;
            ring_tracker_acquire(c_tracker, (const uint8_t *)key.data(), key.size(), &index, &id, &len, &probes);
            leases.push_back(tracker.acquire(key));
            const shardring::Lease &lease = leases.back();
            same = same && lease.index() == index && lease.node() == std::string_view(id, len) &&
                   lease.probes() == probes && lease.active();
        }
        CHECK(same, "200 acquires place as the C tracker does");
        CHECK(tracker.total_load() == 200 && tracker.total_load() == ring_tracker_total_load(c_tracker), "load 200");
        uint64_t loads = 0;
        for (size_t n = 0; n < 3; n++) {
            uint64_t c_load;
            ring_tracker_load(c_tracker, n, &c_load);
            CHECK(tracker.load(n) == c_load, "node %zu load", n);
            loads += tracker.load(n);
        }
        CHECK(loads == 200, "loads add up");
        uint64_t bound = (uint64_t)std::ceil(1.1 * 200 / 3);
        CHECK(tracker.load(0) <= bound && tracker.load(1) <= bound && tracker.load(2) <= bound, "bounded loads");
        shardring::Lease first = std::move(leases.front());
        CHECK(!leases.front().active() && first.active(), "a moved lease moves its load");
        first.release();
        CHECK(!first.active() && tracker.total_load() == 199, "release gives one back");
        first.release();
        CHECK(tracker.total_load() == 199, "a second release does nothing");
    }
    CHECK(tracker.total_load() == 0, "leases give their load back when destroyed");

    shardring::Lease on_c = tracker.acquire("k");
    std::string node(on_c.node());
    tracker.release(node);  // by hand: now the lease's unit is gone
    CHECK(tracker.total_load() == 0, "release by id");
    CHECK(error_code([&] { tracker.release(node); }) == RING_NO_LOAD, "release below 0");
    CHECK(error_code([&] { on_c.release(); }) == RING_NO_LOAD && !on_c.active(), "the lease's release says so too");

    shardring::Lease kept = tracker.acquire("k");
    std::string served(kept.node());
    shardring::Ring without = ring.without_node(served);
    tracker.swap(without);
    CHECK(tracker.total_load() == 0, "a node that left takes its load");
    CHECK(error_code([&] { kept.release(); }) == RING_UNKNOWN_NODE, "releasing on a node that left");
    {
        shardring::Lease gone = tracker.acquire("k");
        tracker.swap(ring);
        CHECK(tracker.total_load() == 1, "swapping back keeps the survivors' load");
        shardring::LoadTracker moved = std::move(tracker);
        tracker = std::move(moved);
    }  // the lease's node is still there: given back
    CHECK(tracker.total_load() == 0, "lease released after the tracker was moved");
    CHECK(error_code([&] { tracker.load(3); }) == RING_INDEX_OUT_OF_RANGE, "load index out of range");
    CHECK(error_code([&] { shardring::LoadTracker(ring, 0.0); }) == RING_INVALID_EPSILON, "epsilon 0");
    CHECK(error_code([&] { shardring::LoadTracker(shardring::Ring(std::vector<shardring::NodeSpec>{}), 0.1).acquire("k"); }) ==
              RING_EMPTY_RING,
          "acquire on an empty ring");
    ring_tracker_free(c_tracker);
}

static void errors_and_version() {
    shardring::Ring ring({{"a"}, {"b"}});
    CHECK(error_code([] { shardring::Ring({{"a"}, {"a"}}); }) == RING_DUPLICATE_ID, "duplicate id throws");
    CHECK(error_code([] { shardring::Ring({{"a", NAN}}); }) == RING_INVALID_WEIGHT, "NaN throws");
    CHECK(error_code([] { shardring::Ring(std::vector<shardring::NodeSpec>{}).get("k"); }) == RING_EMPTY_RING,
          "empty ring throws");
    CHECK(error_code([] { shardring::Ring(std::vector<shardring::NodeSpec>{}).get_batch(std::vector<std::string>{"k"}); }) ==
              RING_EMPTY_RING,
          "empty ring batch throws");
    CHECK(error_code([&] { ring.without_node("zz"); }) == RING_UNKNOWN_NODE, "unknown node throws");
    CHECK(error_code([&] { ring.with_weight("zz", 1.0); }) == RING_UNKNOWN_NODE, "re-weight unknown throws");
    CHECK(error_code([&] { ring.with_node({"a"}); }) == RING_DUPLICATE_ID, "add twice throws");
    CHECK(error_code([&] { ring.node_id(7); }) == RING_INDEX_OUT_OF_RANGE, "index throws");
    CHECK(error_code([&] { ring.node_weight(7); }) == RING_INDEX_OUT_OF_RANGE, "weight index throws");
    CHECK(error_code([] { shardring::Ring::from_json("{"); }) == RING_INVALID_CONFIG, "bad JSON throws");
    try {
        shardring::Ring({{"a", -1.0}});
        CHECK(false, "weight -1 did not throw");
    } catch (const shardring::Error &e) {
        CHECK(std::string(e.what()).find("-1") != std::string::npos, "message names the weight: %s", e.what());
        CHECK(std::strcmp(e.name(), "RING_INVALID_WEIGHT") == 0, "name() %s", e.name());
        CHECK(std::strcmp(e.description(), ring_result_str(RING_INVALID_WEIGHT)) == 0, "description() %s",
              e.description());
    }
    // Version: the library's string and the header's macros agree.
    std::string macros = std::to_string(RING_VERSION_MAJOR) + "." + std::to_string(RING_VERSION_MINOR) + "." +
                         std::to_string(RING_VERSION_PATCH);
    CHECK(shardring::version() == macros && shardring::version() == ring_version(), "version %s",
          std::string(shardring::version()).c_str());
    CHECK(shardring::version_major == RING_VERSION_MAJOR && shardring::version_minor == RING_VERSION_MINOR &&
              shardring::version_patch == RING_VERSION_PATCH,
          "version constants");
}

// A Follower over a config file: the first ring, a replaced file, the
// callback, waits and errors.
static void follower() {
    char dir[] = "/tmp/shardring-hpp-XXXXXX";
    CHECK(mkdtemp(dir) != nullptr, "mkdtemp");
    std::string path = std::string(dir) + "/ring.json";
    auto write = [&](const char *json) {
        std::string temporary = path + ".tmp";
        FILE *f = std::fopen(temporary.c_str(), "w");
        std::fputs(json, f);
        std::fclose(f);
        std::rename(temporary.c_str(), path.c_str());
    };
    write("{\"format_version\": 1, \"nodes\": [{\"id\": \"a\"}, {\"id\": \"b\"}]}");
    static std::atomic<int> changes{0};
    auto on_event = [](void *userdata, uint32_t kind, int64_t, uint64_t, std::string_view) {
        if (kind == RING_FOLLOWER_CHANGED && userdata == &changes) changes++;
    };
    {
        shardring::Follower f = shardring::Follower::file(path, 5000, on_event, &changes);
        shardring::Ring first = f.ring();
        CHECK(first.size() == 2 && f.revision() == 1 && f.epoch() == 1, "the first ring");
        write("{\"format_version\": 1, \"nodes\": [{\"id\": \"a\"}, {\"id\": \"b\"}, {\"id\": \"c\"}]}");
        CHECK(f.wait_for_revision(2, 10000) == 2, "the replaced file");
        CHECK(f.ring().size() == 3 && first.size() == 2 && f.epoch() == 2, "new ring; the old one unchanged");
        shardring::Follower::Status status = f.status();
        CHECK(status.connected && status.epochs >= 2 && status.fingerprint == f.ring().fingerprint(), "status");
        char printed[32];
        snprintf(printed, sizeof printed, "%016llx", static_cast<unsigned long long>(status.fingerprint));
        CHECK(f.fingerprint_hex() == printed && f.fingerprint_hex() == f.ring().fingerprint_hex(),
              "the follower's fingerprint text %s", f.fingerprint_hex().c_str());
        CHECK(changes.load() >= 1, "callback called");
        {
            shardring::Ring ring = f.ring();
            uint64_t before = f.lookup_count("c"), made = 0;
            for (int i = 0; i < 300; i++) made += ring.get("key-" + std::to_string(i)) == "c";
            CHECK(made > 0 && f.lookup_count("c") - before == made, "lookups counted: %llu",
                  static_cast<unsigned long long>(made));
            CHECK(f.metrics().find("shardring_lookups_total{node=\"c\"}") != std::string::npos, "metrics text");
        }
        try {
            f.wait_for_revision(99, 20);
            CHECK(false, "waiting for a revision never reached throws");
        } catch (const shardring::Error &e) {
            CHECK(e.code() == RING_TIMEOUT, "RING_TIMEOUT: %s", e.name());
        }
        shardring::Follower moved = std::move(f);
        CHECK(moved.ring().size() == 3, "moved follower works");
        CHECK(moved.transition().fingerprint() == moved.ring().fingerprint(), "a steady follower's transition is its ring");
        std::pair<shardring::Ring, shardring::SpreadPlan> plan = moved.plan("user:42");
        CHECK(plan.first.size() == 3 && plan.first.node_id(plan.second.owner) == plan.first.get("user:42") &&
                  plan.second.read == plan.second.owner && plan.second.copies.empty(),
              "a file follower's plan: the owner alone");
        shardring::NearCache near(8, 1000);
        moved.report_near_cache(near);
        CHECK(moved.metrics().find("shardring_near_cache_capacity 8.0") != std::string::npos, "the near cache reported");
    }
    try {
        shardring::Follower::etcd("nowhere", "/p");
        CHECK(false, "a bad endpoint throws");
    } catch (const shardring::Error &e) {
        CHECK(e.code() == RING_INVALID_CONFIG, "RING_INVALID_CONFIG: %s", e.name());
    }
    shardring::Follower::Security security;
    security.user = "follower";
    security.password_file = "/nonexistent/password";
    try {
        shardring::Follower::etcd("http://127.0.0.1:1", "/p", security);
        CHECK(false, "a missing password file throws");
    } catch (const shardring::Error &e) {
        CHECK(e.code() == RING_FILE && std::string(e.what()).find("/nonexistent/password") != std::string::npos,
              "RING_FILE naming the file: %s", e.what());
    }
    std::remove(path.c_str());
    rmdir(dir);
}

// A Transition: read and write sets against the C calls and the rings.
static void transition() {
    const char *config = "{\"format_version\": 1, \"nodes\": [{\"id\": \"a\"}, {\"id\": \"b\"}, "
                         "{\"id\": \"w\", \"state\": \"warming\"}, {\"id\": \"d\", \"state\": \"draining\"}]}";
    shardring::Transition t = shardring::Transition::from_json(config);
    shardring::Ring read = t.ring(), before = t.ring(RING_TRANSITION_OLD), after = t.ring(RING_TRANSITION_NEW);
    CHECK(read.size() == 2 && before.size() == 3 && after.size() == 3, "the three rings");
    for (int i = 0; i < 1000; i++) {
        std::string key = "key-" + std::to_string(i);
        std::vector<std::string_view> reads = t.read_nodes(key), writes = t.write_nodes(key);
        CHECK(reads[0] == read.get(key) && writes[0] == read.get(key), "active owner first");
        CHECK(reads.size() == (before.get(key) == "d" ? 2u : 1u), "draining fallback");
        CHECK(writes.size() == (after.get(key) == "w" ? 2u : 1u), "warming writes");
        shardring::Transition::Route route = t.route(key);
        CHECK(route.old_owner == before.get(key) && route.new_owner == after.get(key), "route");
        CHECK(route.moving == (before.get(key) != after.get(key)), "moving when the owners differ");
    }
    CHECK(t.handoff_mark().rfind("shardring:handoff:", 0) == 0 && t.handoff_mark().size() == 34, "the mark");
    CHECK(shardring::redis_guard().find(shardring::redis_moved_reply()) != std::string_view::npos &&
              shardring::redis_guard_sha1().size() == 40,
          "the guard");
    CHECK(t.state("w") == RING_STATE_WARMING && t.state("d") == RING_STATE_DRAINING, "states");
    shardring::Transition between = shardring::Transition::between(before, after);
    CHECK(between.fingerprint() == t.fingerprint(), "between");
    shardring::Transition moved = std::move(between);
    CHECK(moved.fingerprint() == t.fingerprint(), "moved transition");
    try {
        t.state("zz");
        CHECK(false, "an unknown id throws");
    } catch (const shardring::Error &e) {
        CHECK(e.code() == RING_UNKNOWN_NODE, "RING_UNKNOWN_NODE: %s", e.name());
    }
}

static void hot_keys() {
    shardring::Ring ring({{"a"}, {"b"}, {"c"}, {"d"}});
    shardring::HotKeys sketch(10, RING_HOT_KEYS_WIDTH, 1);
    shardring::Ring watched = sketch.watch(ring);
    for (int i = 0; i < 2000; i++) {
        std::string key = i % 4 == 0 ? "hot" : "key-" + std::to_string(i);
        CHECK(watched.get(key) == ring.get(key), "a watched ring places as its ring");
    }
    sketch.observe("hot");
    std::vector<shardring::HotKey> top = sketch.top();
    CHECK(!top.empty() && top[0].key == "hot" && top[0].requests >= 490 && top[0].requests <= 1000 && top[0].rate > 0,
          "the hot key first: %s", top.empty() ? "(none)" : top[0].key.c_str());
    CHECK(error_code([] { shardring::HotKeys bad(10, 100); }) == RING_INVALID_CONFIG, "width 100");

    shardring::HotSet set = shardring::HotSet::from_json(
        "{\"epoch\": 4, \"keys\": [{\"key\": \"hot\", \"replicas\": 2, \"phase\": \"spread\", \"generation\": 12, "
        "\"rate\": 10.0}]}");
    CHECK(set.epoch() == 4, "epoch");
    std::vector<std::string_view> prefs = ring.get_n("hot", 2);
    size_t copy_reads = 0;
    for (int i = 0; i < 4; i++) {
        shardring::SpreadPlan plan = set.plan(ring, "hot");
        CHECK(ring.node_id(plan.owner) == prefs[0] && plan.copies.size() == 1 && ring.node_id(plan.copies[0]) == prefs[1],
              "owner and copy");
        CHECK(plan.copy_suffix == "#hot12", "suffix %s", plan.copy_suffix.c_str());
        copy_reads += plan.read_copy;
    }
    CHECK(copy_reads == 2, "every other read on the copy: %zu", copy_reads);
    CHECK(set.plan(ring, "cold").copies.empty() && set.plan(ring, "cold").copy_suffix.empty(), "a cold key");
    shardring::HotSet moved = std::move(set);
    CHECK(moved.epoch() == 4, "moved set");
    CHECK(error_code([] { shardring::HotSet::from_json("{\"epoch\": 1}"); }) == RING_INVALID_CONFIG, "no keys");

    shardring::NearCache cache(shardring::NearCache::default_capacity(4), 60000);
    std::string big(5000, 'v');
    cache.put("big", big);
    CHECK(cache.get("big") == big, "a value longer than the first buffer");
    cache.remove("big");
    cache.put("k", "v");
    CHECK(cache.get("k") == "v", "a hit");
    CHECK(!cache.get("other"), "a miss");
    cache.remove("k");
    CHECK(!cache.get("k"), "removed");
    shardring::NearCache::Stats stats = cache.stats();
    CHECK(stats.hits == 3 && stats.misses == 2 && stats.entries == 0, "stats (the big value counted twice) %llu %llu %zu",
          (unsigned long long)stats.hits, (unsigned long long)stats.misses, stats.entries);
    CHECK(error_code([] { shardring::NearCache bad(0, 1000); }) == RING_INVALID_CONFIG, "capacity 0");
}

int main(int argc, char **argv) {
    if (argc != 2) {
        std::fprintf(stderr, "usage: %s testdata/vectors.json\n", argv[0]);
        return 2;
    }
    json_error_t error;
    json_t *vectors = json_load_file(argv[1], JSON_ALLOW_NUL, &error);
    if (!vectors) {
        std::fprintf(stderr, "%s:%d: %s\n", argv[1], error.line, error.text);
        return 2;
    }
    size_t i;
    json_t *c;
    try {
        json_array_foreach(json_object_get(vectors, "cases"), i, c) run_vector(c);
        exact_values();
        references_and_derivations();
        trackers();
        errors_and_version();
        follower();
        transition();
        hot_keys();
    } catch (const shardring::Error &e) {
        CHECK(false, "unexpected %s: %s", e.name(), e.what());
    }
    std::printf("C++ wrapper: %zu vector cases\n", json_array_size(json_object_get(vectors, "cases")));
    json_decref(vectors);
    std::printf("C++ wrapper: %d passed, %d failed\n", passed, failed);
    return failed ? 1 : 0;
}
