// shardring C++ wrapper: a header-only RAII layer over the whole C API of
// include/ring.h. Requires C++17 (std::optional, std::string_view).
//
// - shardring::Ring owns one reference to an immutable ring_t: copying calls
//   ring_clone, destruction ring_free, so copies are cheap and safe to hand
//   to other threads (every const method may run on many threads at once).
// - shardring::Diff owns a ring_diff_t; shardring::LoadTracker a
//   ring_tracker_t, and its acquire() returns a shardring::Lease that gives
//   its unit of load back when destroyed. Both are move-only.
// - shardring::HotKeys (a sketch of the most requested keys), HotSet (the
//   fleet's hot set and a key's SpreadPlan) and NearCache are move-only too.
// - Keys are std::string_view bytes. Node ids come back as std::string_view
//   into the ring (or diff), valid while any copy of it lives.
// - Every failed call throws shardring::Error: code() is the ring_result,
//   name() its header spelling ("RING_EMPTY_RING"), what() the message
//   naming the bad value (ring_last_error()).
// - Parameters follow the library's one rule for defaults: one left out
//   (std::nullopt) gets its default; one given is passed as given, so 0 is
//   never a default (vnodes 0 throws RING_ZERO_VNODES).
#ifndef RING_HPP
#define RING_HPP

#if __cplusplus < 201703L && !(defined(_MSVC_LANG) && _MSVC_LANG >= 201703L)
#error "ring.hpp needs C++17 or later (std::optional, std::string_view)"
#endif

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "ring.h"

namespace shardring {

/// The library's version, "MAJOR.MINOR.PATCH" (ring_version()); the header's
/// is RING_VERSION_MAJOR/MINOR/PATCH, also as version_major/minor/patch.
inline std::string_view version() noexcept { return ring_version(); }
inline constexpr int version_major = RING_VERSION_MAJOR;
inline constexpr int version_minor = RING_VERSION_MINOR;
inline constexpr int version_patch = RING_VERSION_PATCH;

/// The Lua source of the Redis handoff guard (ring_redis_guard; core/SPEC.md,
/// Handoff): EVALSHA <redis_guard_sha1()> 2 <key> <mark> <command> [arguments after
/// the key] on a moving key's old owner (mark: Transition::handoff_mark) runs the
/// command there unless the key is missing and the mover set the mark; then it
/// answers the error redis_moved_reply() and runs nothing.
inline std::string_view redis_guard() noexcept { return ring_redis_guard(); }
/// SHA-1 of redis_guard(), 40 lowercase hex digits (ring_redis_guard_sha1).
inline std::string_view redis_guard_sha1() noexcept { return ring_redis_guard_sha1(); }
/// The guard's error message when the key is not there, "SHARDRING_MOVED" (ring_redis_moved_reply).
inline std::string_view redis_moved_reply() noexcept { return ring_redis_moved_reply(); }
/// The guard's error message while the mover holds the missing key in doubt,
/// "SHARDRING_TRYAGAIN": send the guarded command again shortly (ring_redis_tryagain_reply).
inline std::string_view redis_tryagain_reply() noexcept { return ring_redis_tryagain_reply(); }

/// A failed ring_* call: code() is the ring_result, what() the detailed message.
class Error : public std::runtime_error {
  public:
    Error(ring_result code, const char *message) : std::runtime_error(message), code_(code) {}
    /// The result code.
    ring_result code() const noexcept { return code_; }
    /// The code's name as ring.h spells it ("RING_EMPTY_RING"; ring_result_name).
    const char *name() const noexcept { return ring_result_name(code_); }
    /// The code's static description ("ring has no points ..."; ring_result_str).
    const char *description() const noexcept { return ring_result_str(code_); }

  private:
    ring_result code_;
};

namespace detail {
inline void check(ring_result code) {
    if (code != RING_OK) throw Error(code, ring_last_error());
}
inline const uint8_t *bytes(std::string_view text) noexcept { return reinterpret_cast<const uint8_t *>(text.data()); }

/// The owner of one boxed C handle, released once by Free: what every
/// move-only class below inherits. Moving swaps the handles, so the
/// moved-from object releases the other's (or nothing).
template <typename T, void (*Free)(T *)>
class Owner {
  protected:
    Owner() noexcept = default;
    Owner(const Owner &) = delete;
    Owner &operator=(const Owner &) = delete;
    Owner(Owner &&other) noexcept : handle_(std::exchange(other.handle_, nullptr)) {}
    Owner &operator=(Owner &&other) noexcept {
        std::swap(handle_, other.handle_);
        return *this;
    }
    ~Owner() { Free(handle_); }

    T *handle_ = nullptr;
};
}  // namespace detail

/// A node for construction: id (non-empty UTF-8), weight (finite, >= 0; 0 =
/// drained), optional zone (non-empty UTF-8).
struct NodeSpec {
    NodeSpec(std::string id, double weight = 1.0, std::optional<std::string> zone = std::nullopt)
        : id(std::move(id)), weight(weight), zone(std::move(zone)) {}
    NodeSpec(const char *id, double weight = 1.0, std::optional<std::string> zone = std::nullopt)
        : NodeSpec(std::string(id), weight, std::move(zone)) {}

    std::string id;
    double weight;
    std::optional<std::string> zone;
};

/// Algorithm and parameters (ring_options_t): each one left out gets its
/// default (the "ring" algorithm, 160 vnodes, seed 0, a Maglev table of
/// 65,537); each one given is passed with its RING_OPTION_* bit. Set the
/// members by name: `shardring::Options options; options.seed = 7;`.
struct Options {
    /// Not an aggregate, so that a braced node list such as {{"a"}, {"b"}}
    /// never reads as nodes plus Options{"b"}.
    explicit Options() = default;

    /// "ring", "ketama", "ketama-spy", "libketama", "nginx", "jump",
    /// "rendezvous", "maglev", "slots", "libmemcached", "twemproxy",
    /// "uhashring", "uhashring-ketama", "hashring-js", "envoy-ring-hash",
    /// "envoy-maglev", "grpc-ring-hash", "haproxy", "jumpback" or "memento"
    /// (core/SPEC.md).
    std::optional<std::string> algorithm;
    /// Points per unit of weight, >= 1 (ring only).
    std::optional<uint32_t> vnodes;
    /// Seed of the XXH3 hashes (ring, jump, rendezvous, maglev, jumpback, memento; only 0 for the others).
    std::optional<uint64_t> seed;
    /// Maglev table size, a prime from the node count to 2^24 (maglev only).
    std::optional<uint32_t> table_size;
    /// Distribution, e.g. "consistent_ketama" (libmemcached) or "modula" (twemproxy).
    std::optional<std::string> distribution;
    /// Key hash, e.g. "one_at_a_time" (libmemcached and twemproxy only).
    std::optional<std::string> key_hash;
    /// "address" or "label" (twemproxy only).
    std::optional<std::string> server_ids;
    /// Two-byte hash tag such as "{}" (twemproxy only).
    std::optional<std::string> hash_tag;
    /// npm hashring's default port (hashring-js only).
    std::optional<uint16_t> default_port;
    /// Envoy's and gRPC's minimum_ring_size (envoy-ring-hash, grpc-ring-hash).
    std::optional<uint64_t> min_ring_size;
    /// Envoy's and gRPC's maximum_ring_size (envoy-ring-hash, grpc-ring-hash).
    std::optional<uint64_t> max_ring_size;
    /// "xx_hash" or "murmur_hash_2" (Envoy), "sdbm", "djb2", "wt6", "crc32" (HAProxy).
    std::optional<std::string> hash_function;
    /// "given" or "by_key" (grpc-ring-hash only).
    std::optional<std::string> endpoint_order;
    /// HAProxy's avalanche (haproxy only).
    std::optional<bool> avalanche;
    /// "id", "id_full_hash" or "id32" (haproxy only).
    std::optional<std::string> server_key;
    /// HAProxy server ids, one per node, 0 for the id HAProxy assigns (haproxy only).
    std::optional<std::vector<uint32_t>> haproxy_ids;
    /// Memento buckets, one per node (memento only; without them nodes take
    /// the buckets not removed, ascending).
    std::optional<std::vector<uint32_t>> buckets;
    /// Memento's removed buckets in removal order, oldest first (memento only).
    std::optional<std::vector<uint32_t>> removed_buckets;
    /// "integer" (the default) or "float" (placement format 1's score; rendezvous only).
    std::optional<std::string> score;
    /// Parameters as a JSON object by name, as a ring config writes them,
    /// e.g. R"({"vnodes": 40})": any parameter, including those a later
    /// library adds without a field here; each given once, here or in its
    /// field (ring_options_t.params).
    std::optional<std::string> params;
};

/// One (from, to) flow of a Diff: `share` of the hash space moves from node
/// `from` to node `to`.
struct Flow {
    double share;
    std::string_view from, to;
};

/// One moved arc of a Diff: every key whose hash h has start <= h <= end
/// moves from node `from` to node `to`.
struct Arc {
    uint64_t start, end;
    std::string_view from, to;
};

class Diff;
class LoadTracker;
class Follower;
class Transition;
class HotKeys;

class Ring {
  public:
    /// Builds a ring on the default algorithm with vnodes points per unit of
    /// weight and the XXH3-64 seed, both passed as given (ring_new). Throws Error.
    explicit Ring(const std::vector<NodeSpec> &nodes, uint32_t vnodes = 160, uint64_t seed = 0) {
        Arrays a(nodes);
        detail::check(ring_new(a.ids.data(), a.id_lens.data(), a.weights.data(), a.zones.data(), a.zone_lens.data(),
                               nodes.size(), vnodes, seed, &handle_));
    }

    /// Builds a ring on any algorithm with the given parameters; the others
    /// get their defaults (ring_new_with_options_sized). Throws Error.
    Ring(const std::vector<NodeSpec> &nodes, const Options &options) {
        ring_options_t c_options{};
        if (options.algorithm) c_options.algorithm = options.algorithm->c_str();
        if (options.vnodes) {
            c_options.fields |= RING_OPTION_VNODES;
            c_options.vnodes = *options.vnodes;
        }
        if (options.seed) {
            c_options.fields |= RING_OPTION_SEED;
            c_options.seed = *options.seed;
        }
        if (options.table_size) {
            c_options.fields |= RING_OPTION_TABLE_SIZE;
            c_options.table_size = *options.table_size;
        }
        if (options.distribution) {
            c_options.fields |= RING_OPTION_DISTRIBUTION;
            c_options.distribution = options.distribution->c_str();
        }
        if (options.key_hash) {
            c_options.fields |= RING_OPTION_KEY_HASH;
            c_options.key_hash = options.key_hash->c_str();
        }
        if (options.server_ids) {
            c_options.fields |= RING_OPTION_SERVER_IDS;
            c_options.server_ids = options.server_ids->c_str();
        }
        if (options.hash_tag) {
            c_options.fields |= RING_OPTION_HASH_TAG;
            c_options.hash_tag = options.hash_tag->c_str();
        }
        if (options.default_port) {
            c_options.fields |= RING_OPTION_DEFAULT_PORT;
            c_options.default_port = *options.default_port;
        }
        if (options.min_ring_size) {
            c_options.fields |= RING_OPTION_MIN_RING_SIZE;
            c_options.min_ring_size = *options.min_ring_size;
        }
        if (options.max_ring_size) {
            c_options.fields |= RING_OPTION_MAX_RING_SIZE;
            c_options.max_ring_size = *options.max_ring_size;
        }
        if (options.hash_function) {
            c_options.fields |= RING_OPTION_HASH_FUNCTION;
            c_options.hash_function = options.hash_function->c_str();
        }
        if (options.endpoint_order) {
            c_options.fields |= RING_OPTION_ENDPOINT_ORDER;
            c_options.endpoint_order = options.endpoint_order->c_str();
        }
        if (options.avalanche) {
            c_options.fields |= RING_OPTION_AVALANCHE;
            c_options.avalanche = *options.avalanche ? 1 : 0;
        }
        if (options.server_key) {
            c_options.fields |= RING_OPTION_SERVER_KEY;
            c_options.server_key = options.server_key->c_str();
        }
        if (options.haproxy_ids) {
            if (options.haproxy_ids->size() != nodes.size()) {
                throw Error(RING_INVALID_CONFIG, "Options::haproxy_ids must hold one id per node");
            }
            c_options.fields |= RING_OPTION_HAPROXY_IDS;
            c_options.haproxy_ids = options.haproxy_ids->data();
        }
        if (options.buckets) {
            if (options.buckets->size() != nodes.size()) {
                throw Error(RING_INVALID_CONFIG, "Options::buckets must hold one bucket per node");
            }
            c_options.fields |= RING_OPTION_BUCKETS;
            c_options.buckets = options.buckets->data();
        }
        if (options.removed_buckets) {
            c_options.fields |= RING_OPTION_REMOVED_BUCKETS;
            c_options.removed_buckets = options.removed_buckets->data();
            c_options.removed_bucket_count = options.removed_buckets->size();
        }
        if (options.score) {
            c_options.fields |= RING_OPTION_SCORE;
            c_options.score = options.score->c_str();
        }
        if (options.params) {
            c_options.fields |= RING_OPTION_PARAMS;
            c_options.params = options.params->c_str();
        }
        Arrays a(nodes);
        detail::check(ring_new_with_options_sized(a.ids.data(), a.id_lens.data(), a.weights.data(), a.zones.data(),
                                                  a.zone_lens.data(), nodes.size(), &c_options, sizeof c_options,
                                                  &handle_));
    }

    /// Builds a ring on an algorithm, with an optional seed and Maglev table
    /// size (the same as Ring(nodes, Options{...})). Throws Error.
    static Ring with_algorithm(const std::vector<NodeSpec> &nodes, const std::string &algorithm,
                               std::optional<uint64_t> seed = std::nullopt,
                               std::optional<uint32_t> table_size = std::nullopt) {
        Options options;
        options.algorithm = algorithm;
        options.seed = seed;
        options.table_size = table_size;
        return Ring(nodes, options);
    }

    /// Builds a ring from its JSON config (ring_new_from_json). Throws Error.
    static Ring from_json(std::string_view json) {
        ring_t *handle = nullptr;
        detail::check(ring_new_from_json(json.data(), json.size(), &handle));
        return Ring(Adopt{}, handle);
    }

    /// The ring's JSON config, pretty-printed (ring_to_json). Throws Error.
    std::string to_json() const {
        char *json = nullptr;
        size_t len = 0;
        detail::check(ring_to_json(handle_, &json, &len));
        std::string copy(json, len);
        ring_string_free(json);
        return copy;
    }

    /// The algorithm's name ("ring", "ketama", ...).
    std::string_view algorithm() const noexcept {
        const char *name = ring_algorithm(handle_);
        return name ? std::string_view(name) : std::string_view();
    }

    Ring(const Ring &other) noexcept : handle_(ring_clone(other.handle_)) {}
    Ring(Ring &&other) noexcept : handle_(std::exchange(other.handle_, nullptr)) {}
    Ring &operator=(Ring other) noexcept {
        std::swap(handle_, other.handle_);
        return *this;
    }
    ~Ring() { ring_free(handle_); }

    /// The id of the node owning key. Throws Error (RING_EMPTY_RING).
    std::string_view get(std::string_view key) const {
        size_t index, len;
        const char *id;
        detail::check(ring_get_node(handle_, detail::bytes(key), key.size(), &index, &id, &len));
        return {id, len};
    }

    /// The index (construction order) of the node owning key. Throws Error.
    size_t get_index(std::string_view key) const {
        size_t index;
        detail::check(ring_get_node(handle_, detail::bytes(key), key.size(), &index, nullptr, nullptr));
        return index;
    }

    /// Up to n distinct node indices in the key's preference order, the
    /// owner first (ring_get_nodes). Throws Error.
    std::vector<size_t> get_n_indices(std::string_view key, size_t n) const {
        std::vector<size_t> indices(std::min(n, size()));
        size_t count = 0;
        detail::check(ring_get_nodes(handle_, detail::bytes(key), key.size(), indices.data(), indices.size(), &count));
        indices.resize(count);
        return indices;
    }

    /// Up to n distinct node ids in the key's preference order (distinct
    /// zones first), the owner first. Throws Error.
    std::vector<std::string_view> get_n(std::string_view key, size_t n) const {
        std::vector<std::string_view> ids;
        for (size_t index : get_n_indices(key, n)) ids.push_back(node_id(index));
        return ids;
    }

    /// The owner's index of every key, in one call (ring_get_node_batch).
    /// Keys is any container of things convertible to std::string_view.
    /// Throws Error (RING_EMPTY_RING).
    template <typename Keys>
    std::vector<size_t> get_batch(const Keys &keys) const {
        std::vector<const uint8_t *> pointers;
        std::vector<size_t> lens;
        for (const auto &key : keys) {
            std::string_view view(key);
            pointers.push_back(detail::bytes(view));
            lens.push_back(view.size());
        }
        std::vector<size_t> indices(lens.size());
        detail::check(
            ring_get_node_batch(handle_, pointers.data(), lens.data(), lens.size(), indices.data(), indices.size()));
        return indices;
    }

    /// The index of the node owning a precomputed key hash (hash_key's, or
    /// any value within the algorithm's hash width) (ring_get_node_by_hash).
    /// Throws Error (RING_EMPTY_RING, RING_HASH_OUT_OF_RANGE).
    size_t get_index_by_hash(uint64_t hash) const {
        size_t index;
        detail::check(ring_get_node_by_hash(handle_, hash, &index));
        return index;
    }

    /// The id of the node owning a precomputed key hash. Throws Error.
    std::string_view get_by_hash(uint64_t hash) const { return node_id(get_index_by_hash(hash)); }

    /// The key's hash under the ring's algorithm and seed (ring_hash_key).
    uint64_t hash_key(std::string_view key) const noexcept {
        return ring_hash_key(handle_, detail::bytes(key), key.size());
    }

    /// Number of nodes (drained ones included).
    size_t size() const noexcept { return ring_node_count(handle_); }

    /// The id of node index. Throws Error (RING_INDEX_OUT_OF_RANGE).
    std::string_view node_id(size_t index) const {
        const char *id;
        size_t len;
        detail::check(ring_node_id(handle_, index, &id, &len));
        return {id, len};
    }

    /// The weight of node index. Throws Error (RING_INDEX_OUT_OF_RANGE).
    double node_weight(size_t index) const {
        double weight;
        detail::check(ring_node_weight(handle_, index, &weight));
        return weight;
    }

    /// Stable 64-bit digest of the ring's config: equal fingerprints place
    /// every key identically (ring_fingerprint).
    uint64_t fingerprint() const noexcept { return ring_fingerprint(handle_); }

    /// The fingerprint as text: 16 lowercase hex digits, zero-padded
    /// ("53712479e1fdae70"), as the CLI and every binding print it
    /// (ring_fingerprint_hex).
    std::string fingerprint_hex() const {
        char hex[RING_FINGERPRINT_HEX_LEN];
        detail::check(ring_fingerprint_hex(handle_, hex, sizeof hex));
        return std::string(hex, RING_FINGERPRINT_HEX_LEN - 1);
    }

    /// Each node's exact share of the hash space, by node index (ring_ownership).
    std::vector<double> ownership() const {
        std::vector<double> shares(size());
        detail::check(ring_ownership(handle_, shares.data(), shares.size()));
        return shares;
    }

    /// A new ring with one node appended; only keys it now owns move. Throws Error.
    Ring with_node(const NodeSpec &node) const {
        ring_t *out = nullptr;
        detail::check(ring_with_node(handle_, node.id.data(), node.id.size(), node.weight,
                                     node.zone ? node.zone->data() : nullptr, node.zone ? node.zone->size() : 0,
                                     &out));
        return Ring(Adopt{}, out);
    }

    /// A new ring without node id; only its keys move. Throws Error (RING_UNKNOWN_NODE).
    Ring without_node(std::string_view id) const {
        ring_t *out = nullptr;
        detail::check(ring_without_node(handle_, id.data(), id.size(), &out));
        return Ring(Adopt{}, out);
    }

    /// A new ring with node id at weight. Throws Error.
    Ring with_weight(std::string_view id, double weight) const {
        ring_t *out = nullptr;
        detail::check(ring_with_weight(handle_, id.data(), id.size(), weight, &out));
        return Ring(Adopt{}, out);
    }

    /// The underlying handle, still owned by this object.
    const ring_t *handle() const noexcept { return handle_; }

  private:
    friend class Follower;
    friend class Transition;
    friend class HotKeys;
    struct Adopt {};
    Ring(Adopt, ring_t *handle) noexcept : handle_(handle) {}

    /// The parallel arrays the C constructors take, viewing `nodes`.
    struct Arrays {
        std::vector<const char *> ids, zones;
        std::vector<size_t> id_lens, zone_lens;
        std::vector<double> weights;
        explicit Arrays(const std::vector<NodeSpec> &nodes) {
            for (const NodeSpec &node : nodes) {
                ids.push_back(node.id.data());
                id_lens.push_back(node.id.size());
                weights.push_back(node.weight);
                zones.push_back(node.zone ? node.zone->data() : nullptr);
                zone_lens.push_back(node.zone ? node.zone->size() : 0);
            }
        }
    };

    ring_t *handle_ = nullptr;
};

/// One of a sketch's hot keys (ring_hot_top_key).
struct HotKey {
    std::string key;
    /// Estimated requests (counts halve every half-life).
    uint64_t requests = 0;
    /// Estimated requests per second.
    double rate = 0;
};

/// How to read and write one key under a hot set (ring_spread_plan_t):
/// indices into the nodes of the ring it was made on.
struct SpreadPlan {
    /// The node to read from; read_copy when it holds a copy (read key +
    /// copy_suffix there, falling back to the owner on a miss).
    size_t read = 0;
    bool read_copy = false;
    /// The owner, written first.
    size_t owner = 0;
    /// The nodes that hold copies, written under key + copy_suffix.
    std::vector<size_t> copies;
    /// "#hot" and the key's generation; empty when the key is not hot.
    std::string copy_suffix;

    static SpreadPlan of(const ring_spread_plan_t &plan) {
        return SpreadPlan{plan.read, plan.read_copy, plan.owner,
                          std::vector<size_t>(plan.copies, plan.copies + plan.copy_count),
                          std::string(reinterpret_cast<const char *>(plan.copy_suffix), plan.copy_suffix_len)};
    }
};

/// A HeavyKeeper sketch of the most requested keys (ring_hot_keys_t);
/// move-only. Rings it watches keep it alive.
class HotKeys : detail::Owner<ring_hot_keys_t, ring_hot_keys_free> {
  public:
    /// A sketch of the top keys, width buckets per row, one lookup in
    /// sample counted, counts halving every half_life_ms (ring_hot_keys_new).
    /// Throws Error (RING_INVALID_CONFIG).
    explicit HotKeys(size_t top = RING_HOT_KEYS_TOP, size_t width = RING_HOT_KEYS_WIDTH,
                     uint32_t sample = RING_HOT_KEYS_SAMPLE, uint64_t half_life_ms = RING_HOT_KEYS_HALF_LIFE_MS) {
        detail::check(ring_hot_keys_new(top, width, sample, half_life_ms, &handle_));
    }

    /// Shows the sketch one lookup of key (ring_hot_keys_observe).
    void observe(std::string_view key) const {
        detail::check(ring_hot_keys_observe(handle_, reinterpret_cast<const uint8_t *>(key.data()), key.size()));
    }

    /// A ring placing as ring that shows this sketch every lookup by key
    /// (ring_watch_hot_keys).
    Ring watch(const Ring &ring) const {
        ring_t *out = nullptr;
        detail::check(ring_watch_hot_keys(ring.handle(), handle_, &out));
        return Ring(Ring::Adopt{}, out);
    }

    /// The top keys now, most requested first (ring_hot_keys_top).
    std::vector<HotKey> top() const {
        ring_hot_top_t *top = nullptr;
        detail::check(ring_hot_keys_top(handle_, &top));
        std::vector<HotKey> keys(ring_hot_top_count(top));
        for (size_t i = 0; i < keys.size(); i++) {
            const uint8_t *key = nullptr;
            size_t len = 0;
            ring_result rc = ring_hot_top_key(top, i, &key, &len, &keys[i].requests, &keys[i].rate);
            if (rc != RING_OK) {
                ring_hot_top_free(top);
                detail::check(rc);
            }
            keys[i].key.assign(reinterpret_cast<const char *>(key), len);
        }
        ring_hot_top_free(top);
        return keys;
    }
};

/// The fleet's agreed hot keys at one epoch (ring_hot_set_t); move-only.
class HotSet : detail::Owner<ring_hot_set_t, ring_hot_set_free> {
  public:
    /// Reads P/hot's JSON (ring_hot_set_new_from_json). Throws Error (RING_INVALID_CONFIG).
    static HotSet from_json(std::string_view json) {
        HotSet set;
        detail::check(ring_hot_set_new_from_json(json.data(), json.size(), &set.handle_));
        return set;
    }

    /// Its publication number (ring_hot_set_epoch).
    uint64_t epoch() const noexcept { return ring_hot_set_epoch(handle_); }

    /// How to read and write key on ring (ring_hot_set_plan). Throws Error (RING_EMPTY_RING).
    SpreadPlan plan(const Ring &ring, std::string_view key) const {
        ring_spread_plan_t plan{};
        detail::check(ring_hot_set_plan(handle_, ring.handle(), reinterpret_cast<const uint8_t *>(key.data()),
                                        key.size(), &plan));
        return SpreadPlan::of(plan);
    }

  private:
    HotSet() = default;
};

/// A small TTL cache of hot keys' values (ring_near_cache_t); move-only.
class NearCache : detail::Owner<ring_near_cache_t, ring_near_cache_free> {
  public:
    /// Hits, misses and entries held (ring_near_cache_stats).
    struct Stats {
        uint64_t hits = 0, misses = 0;
        size_t entries = 0;
    };

    /// ceil(n log2 n) entries for n nodes, at least 16 (ring_near_cache_default_capacity).
    static size_t default_capacity(size_t nodes) noexcept { return ring_near_cache_default_capacity(nodes); }

    /// At most capacity entries, each served for ttl_ms (ring_near_cache_new).
    /// Throws Error (RING_INVALID_CONFIG).
    NearCache(size_t capacity, uint64_t ttl_ms) { detail::check(ring_near_cache_new(capacity, ttl_ms, &handle_)); }

    /// Stores a copy of value under key (ring_near_cache_put).
    void put(std::string_view key, std::string_view value) const {
        detail::check(ring_near_cache_put(handle_, reinterpret_cast<const uint8_t *>(key.data()), key.size(),
                                          reinterpret_cast<const uint8_t *>(value.data()), value.size()));
    }

    /// The value of key while fresh, else nullopt (ring_near_cache_get). A
    /// value over 4 KiB takes a second call, so it counts as two hits.
    std::optional<std::string> get(std::string_view key) const {
        std::string value(4096, '\0');
        for (;;) {
            size_t len = 0;
            bool found = false;
            ring_result rc = ring_near_cache_get(handle_, reinterpret_cast<const uint8_t *>(key.data()), key.size(),
                                                 reinterpret_cast<uint8_t *>(value.data()), value.size(), &len, &found);
            if (rc == RING_BUFFER_TOO_SMALL) {
                value.resize(len);
                continue;
            }
            detail::check(rc);
            if (!found) return std::nullopt;
            value.resize(len);
            return value;
        }
    }

    /// Drops key's entry (ring_near_cache_remove).
    void remove(std::string_view key) const {
        detail::check(ring_near_cache_remove(handle_, reinterpret_cast<const uint8_t *>(key.data()), key.size()));
    }

    const ring_near_cache_t *handle() const noexcept { return handle_; }

    Stats stats() const {
        Stats stats;
        detail::check(ring_near_cache_stats(handle_, &stats.hits, &stats.misses, &stats.entries));
        return stats;
    }
};

/// The exact difference between two rings (ring_diff_t); independent of the
/// rings it was made from. Node ids in its flows and arcs are valid while it lives.
class Diff : detail::Owner<ring_diff_t, ring_diff_free> {
  public:
    /// Compares old_ring and new_ring position by position (ring_diff).
    /// Throws Error (RING_SEED_MISMATCH, RING_ALGORITHM_MISMATCH, RING_EMPTY_RING).
    Diff(const Ring &old_ring, const Ring &new_ring) {
        detail::check(ring_diff(old_ring.handle(), new_ring.handle(), &handle_));
    }

    /// Fraction of the hash space whose owner differs, in [0, 1].
    double moved_share() const noexcept { return ring_diff_moved_share(handle_); }

    /// Number of (from, to) flows.
    size_t flow_count() const noexcept { return ring_diff_flow_count(handle_); }

    /// Flow index (largest first). Throws Error (RING_INDEX_OUT_OF_RANGE).
    Flow flow(size_t index) const {
        Flow flow{};
        const char *from, *to;
        size_t from_len, to_len;
        detail::check(ring_diff_flow(handle_, index, &flow.share, &from, &from_len, &to, &to_len));
        flow.from = {from, from_len};
        flow.to = {to, to_len};
        return flow;
    }

    /// Every flow, largest first.
    std::vector<Flow> flows() const {
        std::vector<Flow> all;
        for (size_t i = 0; i < flow_count(); i++) all.push_back(flow(i));
        return all;
    }

    /// Number of moved arcs (0 for jump and rendezvous, which have none).
    size_t arc_count() const noexcept { return ring_diff_arc_count(handle_); }

    /// Moved arc index, in ring order. Throws Error (RING_INDEX_OUT_OF_RANGE).
    Arc arc(size_t index) const {
        Arc arc{};
        const char *from, *to;
        size_t from_len, to_len;
        detail::check(ring_diff_arc(handle_, index, &arc.start, &arc.end, &from, &from_len, &to, &to_len));
        arc.from = {from, from_len};
        arc.to = {to, to_len};
        return arc;
    }

    /// Every moved arc, in ring order.
    std::vector<Arc> arcs() const {
        std::vector<Arc> all;
        for (size_t i = 0; i < arc_count(); i++) all.push_back(arc(i));
        return all;
    }
};

/// The exact difference between two rings: Diff(old_ring, new_ring).
inline Diff diff(const Ring &old_ring, const Ring &new_ring) { return Diff(old_ring, new_ring); }

/// One unit of load a LoadTracker placed on a node. Gives it back when
/// destroyed, unless release() already did (move-only; must not outlive its
/// tracker). When a swap removed the node its load left with it, and the
/// destructor has nothing to give back.
class Lease {
  public:
    Lease(const Lease &) = delete;
    Lease &operator=(const Lease &) = delete;
    Lease(Lease &&other) noexcept
        : tracker_(std::exchange(other.tracker_, nullptr)), id_(std::move(other.id_)), index_(other.index_),
          probes_(other.probes_) {}
    Lease &operator=(Lease &&other) noexcept {
        if (this != &other) {
            give_back();
            tracker_ = std::exchange(other.tracker_, nullptr);
            id_ = std::move(other.id_);
            index_ = other.index_;
            probes_ = other.probes_;
        }
        return *this;
    }
    ~Lease() { give_back(); }

    /// The id of the node serving the request (a copy: valid across swaps).
    std::string_view node() const noexcept { return id_; }
    /// The node's index in the tracker's ring when the lease was taken.
    size_t index() const noexcept { return index_; }
    /// Distinct nodes tried (1 = the key's owner).
    uint32_t probes() const noexcept { return probes_; }
    /// Whether the lease still holds its unit of load.
    bool active() const noexcept { return tracker_ != nullptr; }

    /// Gives the unit of load back now (ring_tracker_release); later calls
    /// and the destructor do nothing. Throws Error (RING_UNKNOWN_NODE when a
    /// swap removed the node).
    void release() {
        if (!tracker_) return;
        const ring_tracker_t *tracker = std::exchange(tracker_, nullptr);
        detail::check(ring_tracker_release(tracker, id_.data(), id_.size()));
    }

  private:
    friend class LoadTracker;
    Lease(const ring_tracker_t *tracker, std::string id, size_t index, uint32_t probes) noexcept
        : tracker_(tracker), id_(std::move(id)), index_(index), probes_(probes) {}

    void give_back() noexcept {
        if (tracker_) (void)ring_tracker_release(std::exchange(tracker_, nullptr), id_.data(), id_.size());
    }

    const ring_tracker_t *tracker_;
    std::string id_;
    size_t index_;
    uint32_t probes_;
};

/// Live load per node over a ring, placing requests with bounded loads
/// (ring_tracker_t; Mirrokni, Thorup and Zadimoghaddam, 2017). acquire,
/// release, swap and the load reads may run on many threads at once.
/// Move-only.
class LoadTracker : detail::Owner<ring_tracker_t, ring_tracker_free> {
  public:
    /// A tracker over ring's snapshot with every load 0 and balance factor
    /// 1 + epsilon (ring_tracker_new). Throws Error (RING_INVALID_EPSILON).
    LoadTracker(const Ring &ring, double epsilon) { detail::check(ring_tracker_new(ring.handle(), epsilon, &handle_)); }
    /// A tracker bounding loads as HAProxy's hash-balance-factor does over
    /// an "haproxy" ring (ring_tracker_new_haproxy). Throws Error (RING_INVALID_CONFIG).
    static LoadTracker haproxy(const Ring &ring, uint32_t hash_balance_factor) {
        LoadTracker tracker;
        detail::check(ring_tracker_new_haproxy(ring.handle(), hash_balance_factor, &tracker.handle_));
        return tracker;
    }

    /// Places a request for key on the first node of its preference order
    /// under capacity and adds one to its load (ring_tracker_acquire); the
    /// Lease gives it back. Throws Error (RING_EMPTY_RING).
    Lease acquire(std::string_view key) {
        size_t index, len;
        const char *id;
        uint32_t probes;
        detail::check(ring_tracker_acquire(handle_, detail::bytes(key), key.size(), &index, &id, &len, &probes));
        return Lease(handle_, std::string(id, len), index, probes);
    }

    /// Removes one unit of load from node id, for loads taken without a
    /// Lease (ring_tracker_release). Throws Error (RING_UNKNOWN_NODE, RING_NO_LOAD).
    void release(std::string_view id) { detail::check(ring_tracker_release(handle_, id.data(), id.size())); }

    /// Moves the tracker onto ring's snapshot: nodes in both keep their
    /// load, nodes that left drop theirs, new ones start at 0 (ring_tracker_swap).
    void swap(const Ring &ring) { detail::check(ring_tracker_swap(handle_, ring.handle())); }

    /// The load of node index in the current ring (ring_tracker_load).
    /// Throws Error (RING_INDEX_OUT_OF_RANGE).
    uint64_t load(size_t index) const {
        uint64_t value;
        detail::check(ring_tracker_load(handle_, index, &value));
        return value;
    }

    /// The total load over all nodes (ring_tracker_total_load).
    uint64_t total_load() const noexcept { return ring_tracker_total_load(handle_); }

    /// The underlying handle, still owned by this object.
    const ring_tracker_t *handle() const noexcept { return handle_; }

  private:
    LoadTracker() = default;
};

/// A ring whose members are warming up or draining (ring_transition_t;
/// core/SPEC.md, Transitions): read_nodes and write_nodes give where to read
/// and write a key. Move-only; ids are views into it, valid while it lives.
class Transition : detail::Owner<ring_transition_t, ring_transition_free> {
  public:
    /// From a JSON ring config whose nodes may carry "state"
    /// (ring_transition_new_from_json). Throws Error.
    static Transition from_json(std::string_view json) {
        Transition t;
        detail::check(ring_transition_new_from_json(json.data(), json.size(), &t.handle_));
        return t;
    }

    /// Members only in `from` drain, members only in `to` warm up
    /// (ring_transition_between). Throws Error (RING_ALGORITHM_MISMATCH, RING_SEED_MISMATCH).
    static Transition between(const Ring &from, const Ring &to) {
        Transition t;
        detail::check(ring_transition_between(from.handle(), to.handle(), &t.handle_));
        return t;
    }


    /// Where to read key: the active owner, then the old owner when it differs
    /// (ring_transition_read_nodes). Throws Error (RING_EMPTY_RING).
    std::vector<std::string_view> read_nodes(std::string_view key) const {
        Set set;
        detail::check(ring_transition_read_nodes(handle_, detail::bytes(key), key.size(), set.ids, set.lens, 2, &set.count));
        return set.views();
    }

    /// Where to write key: the active owner, then the new owner when it
    /// differs (ring_transition_write_nodes). Throws Error (RING_EMPTY_RING).
    std::vector<std::string_view> write_nodes(std::string_view key) const {
        Set set;
        detail::check(ring_transition_write_nodes(handle_, detail::bytes(key), key.size(), set.ids, set.lens, 2, &set.count));
        return set.views();
    }

    /// Where a key is (old) and where it goes (new), and whether they differ.
    struct Route {
        std::string_view old_owner;
        std::string_view new_owner;
        bool moving;
    };

    /// The key's owner under the old ring and under the new ring
    /// (ring_transition_route). Throws Error (RING_EMPTY_RING).
    Route route(std::string_view key) const {
        const char *old_id = nullptr, *new_id = nullptr;
        size_t old_len = 0, new_len = 0;
        bool moving = false;
        detail::check(ring_transition_route(handle_, detail::bytes(key), key.size(), &old_id, &old_len, &new_id, &new_len, &moving));
        return Route{{old_id, old_len}, {new_id, new_len}, moving};
    }

    /// The handoff mark, "shardring:handoff:" and the fingerprint in 16 hex
    /// digits: the guard's second key (ring_transition_handoff_mark).
    std::string handoff_mark() const {
        char mark[RING_HANDOFF_MARK_LEN];
        detail::check(ring_transition_handoff_mark(handle_, mark, sizeof mark));
        return mark;
    }

    /// One of the three rings: RING_TRANSITION_READ, _OLD or _NEW (ring_transition_ring).
    Ring ring(uint32_t which = RING_TRANSITION_READ) const {
        ring_t *ring = nullptr;
        detail::check(ring_transition_ring(handle_, which, &ring));
        return Ring(Ring::Adopt{}, ring);
    }

    /// A member's state, RING_STATE_* (ring_transition_state). Throws Error (RING_UNKNOWN_NODE).
    uint32_t state(std::string_view id) const {
        uint32_t state = 0;
        detail::check(ring_transition_state(handle_, id.data(), id.size(), &state));
        return state;
    }

    /// The fingerprint of the config, states included (ring_transition_fingerprint).
    uint64_t fingerprint() const noexcept { return ring_transition_fingerprint(handle_); }

  private:
    friend class Follower;
    Transition() = default;
    /// Room for one read or write set (two nodes at most).
    struct Set {
        const char *ids[2];
        size_t lens[2];
        size_t count = 0;
        std::vector<std::string_view> views() const {
            std::vector<std::string_view> out;
            for (size_t i = 0; i < count; i++) out.emplace_back(ids[i], lens[i]);
            return out;
        }
    };
};

/// A ring kept current by a background thread, from the member records
/// under a prefix in etcd or from a JSON config file (ring_follower_t).
/// ring() gives the current ring, whole; every method may run on many
/// threads at once. Move-only.
class Follower {
  public:
    /// An event: kind is a RING_FOLLOWER_* constant; message names a rejected
    /// record's key or what failed (empty otherwise). Called on the
    /// follower's thread; it must not destroy its own Follower.
    using Callback = void (*)(void *userdata, uint32_t kind, int64_t revision, uint64_t fingerprint,
                              std::string_view message);

    /// Follows prefix in etcd at endpoints ("http://127.0.0.1:2379",
    /// comma-separated), once the first ring is read within timeout_ms
    /// (ring_follower_new_etcd). Throws Error (RING_TIMEOUT, RING_REFUSED: etcd refused this client,
    /// RING_INVALID_CONFIG).
    static Follower etcd(std::string_view endpoints, std::string_view prefix, uint32_t timeout_ms = 5000,
                         Callback callback = nullptr, void *userdata = nullptr) {
        Follower follower(callback, userdata);
        detail::check(ring_follower_new_etcd(endpoints.data(), endpoints.size(), prefix.data(), prefix.size(),
                                             timeout_ms, follower.c_callback(), follower.state_, &follower.handle_));
        return follower;
    }

    /// TLS files and an etcd user (ring_etcd_security_t); an empty string is "not given". The
    /// password is sent to etcd only; it appears in no error.
    struct Security {
        std::string ca_file, cert_file, key_file, user, password, password_file;
    };

    /// As etcd() above, over TLS and with etcd's auth as security says
    /// (ring_follower_new_etcd_secure). Throws Error (RING_FILE: a TLS or password file that cannot be used;
    /// RING_INVALID_CONFIG; RING_REFUSED with the endpoint and the TLS or auth reason: a certificate, TLS
    /// against plain TCP, a wrong password, a permission denied; RING_TIMEOUT when etcd does not answer).
    static Follower etcd(std::string_view endpoints, std::string_view prefix, const Security &security,
                         uint32_t timeout_ms = 5000, Callback callback = nullptr, void *userdata = nullptr) {
        auto given = [](const std::string &text) { return text.empty() ? nullptr : text.c_str(); };
        ring_etcd_security_t c_security{given(security.ca_file), given(security.cert_file),
                                        given(security.key_file), given(security.user),
                                        given(security.password),  given(security.password_file)};
        Follower follower(callback, userdata);
        detail::check(ring_follower_new_etcd_secure(endpoints.data(), endpoints.size(), prefix.data(), prefix.size(),
                                                    &c_security, timeout_ms, follower.c_callback(), follower.state_,
                                                    &follower.handle_));
        return follower;
    }

    /// Follows a JSON ring config file (ring_follower_new_file). Throws Error (RING_FILE: the file cannot
    /// be read or its config is refused, at once).
    static Follower file(std::string_view path, uint32_t timeout_ms = 5000, Callback callback = nullptr,
                         void *userdata = nullptr) {
        Follower follower(callback, userdata);
        detail::check(ring_follower_new_file(path.data(), path.size(), timeout_ms, follower.c_callback(),
                                             follower.state_, &follower.handle_));
        return follower;
    }

    Follower(const Follower &) = delete;
    Follower &operator=(const Follower &) = delete;
    Follower(Follower &&other) noexcept
        : handle_(std::exchange(other.handle_, nullptr)), state_(std::exchange(other.state_, nullptr)) {}
    Follower &operator=(Follower &&other) noexcept {
        std::swap(handle_, other.handle_);
        std::swap(state_, other.state_);
        return *this;
    }
    ~Follower() {
        ring_follower_free(handle_);
        delete state_;
    }

    /// The current ring, which stays as it is after later epochs (ring_follower_ring).
    Ring ring() const {
        ring_t *ring = nullptr;
        detail::check(ring_follower_ring(handle_, &ring, nullptr));
        return Ring(Ring::Adopt{}, ring);
    }

    /// The current transition: read and write sets while members warm up or
    /// drain (ring_follower_transition).
    Transition transition() const {
        Transition t;
        detail::check(ring_follower_transition(handle_, &t.handle_, nullptr));
        return t;
    }

    /// The state: revision, fingerprint, connected, seconds stale, epochs published.
    struct Status {
        int64_t revision;
        uint64_t fingerprint;
        bool connected;
        double stale_seconds;
        uint64_t epochs;
    };

    /// The follower's state (ring_follower_status).
    Status status() const {
        Status s{};
        uint8_t connected = 0;
        detail::check(ring_follower_status(handle_, &s.revision, &s.fingerprint, &connected, &s.stale_seconds, &s.epochs));
        s.connected = connected != 0;
        return s;
    }

    /// The revision the follower holds (etcd's: lower after a restore).
    int64_t revision() const { return status().revision; }

    /// The epoch number: it only grows, across an etcd restore too
    /// (ring_follower_epoch).
    uint64_t epoch() const {
        uint64_t epoch = 0;
        detail::check(ring_follower_epoch(handle_, &epoch));
        return epoch;
    }

    /// The current fingerprint (Status::fingerprint, as the events give it)
    /// as 16 lowercase hex digits, zero-padded, as the CLI prints an epoch's
    /// (ring_follower_fingerprint_hex).
    std::string fingerprint_hex() const {
        char hex[RING_FINGERPRINT_HEX_LEN];
        detail::check(ring_follower_fingerprint_hex(handle_, hex, sizeof hex));
        return std::string(hex, RING_FINGERPRINT_HEX_LEN - 1);
    }

    /// Lookups on this follower's rings that chose node `id` so far
    /// (ring_follower_lookup_count).
    uint64_t lookup_count(std::string_view id) const {
        uint64_t count = 0;
        detail::check(ring_follower_lookup_count(handle_, id.data(), id.size(), &count));
        return count;
    }

    /// The follower's metrics as OpenMetrics text (ring_follower_metrics).
    std::string metrics() const {
        char *text = nullptr;
        size_t len = 0;
        detail::check(ring_follower_metrics(handle_, &text, &len));
        std::string copy(text, len);
        ring_string_free(text);
        return copy;
    }

    /// How to read and write key now under the fleet's hot set, with the
    /// ring the plan's indices refer to (ring_follower_plan). Throws Error (RING_EMPTY_RING).
    std::pair<Ring, SpreadPlan> plan(std::string_view key) const {
        ring_spread_plan_t plan{};
        ring_t *ring = nullptr;
        detail::check(ring_follower_plan(handle_, reinterpret_cast<const uint8_t *>(key.data()), key.size(), &plan,
                                         &ring));
        return {Ring(Ring::Adopt{}, ring), SpreadPlan::of(plan)};
    }

    /// The metrics report cache (ring_follower_report_near_cache); the
    /// follower keeps it alive.
    void report_near_cache(const NearCache &cache) const {
        detail::check(ring_follower_report_near_cache(handle_, cache.handle()));
    }

    /// Blocks until the follower holds revision or later; returns the revision
    /// held (ring_follower_wait). Throws Error (RING_TIMEOUT).
    int64_t wait_for_revision(int64_t revision, uint32_t timeout_ms = 5000) const {
        int64_t held = 0;
        detail::check(ring_follower_wait(handle_, revision, timeout_ms, &held));
        return held;
    }

  private:
    struct State {
        Callback callback;
        void *userdata;
    };
    Follower(Callback callback, void *userdata) : state_(new State{callback, userdata}) {}

    static void trampoline(void *state, uint32_t kind, int64_t revision, uint64_t fingerprint, const char *message,
                           size_t message_len) {
        const State *s = static_cast<const State *>(state);
        s->callback(s->userdata, kind, revision, fingerprint, std::string_view(message, message_len));
    }
    ring_follower_callback c_callback() const noexcept { return state_->callback ? &Follower::trampoline : nullptr; }

    ring_follower_t *handle_ = nullptr;
    State *state_ = nullptr;
};

}  // namespace shardring

#endif  // RING_HPP
