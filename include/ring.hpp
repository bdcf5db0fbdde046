// shardring C++ wrapper: a header-only RAII layer over include/ring.h (C++17).
//
// shardring::Ring owns one reference to an immutable ring_t: copying calls
// ring_clone, destruction calls ring_free, so copies are cheap and safe to
// hand to other threads. Keys are std::string_view bytes; node ids come back
// as std::string_view into the ring, valid while any copy of it lives.
// Errors throw shardring::Error, whose code() is the ring_result.
#ifndef RING_HPP
#define RING_HPP

#include <algorithm>
#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "ring.h"

namespace shardring {

/// A failed ring_* call: code() is the ring_result, what() the detailed message.
class Error : public std::runtime_error {
  public:
    Error(ring_result code, const char *message) : std::runtime_error(message), code_(code) {}
    ring_result code() const noexcept { return code_; }

  private:
    ring_result code_;
};

/// A node for construction: id (non-empty UTF-8), weight (finite, >= 0), optional zone.
struct NodeSpec {
    NodeSpec(std::string id, double weight = 1.0, std::optional<std::string> zone = std::nullopt)
        : id(std::move(id)), weight(weight), zone(std::move(zone)) {}
    NodeSpec(const char *id, double weight = 1.0, std::optional<std::string> zone = std::nullopt)
        : NodeSpec(std::string(id), weight, std::move(zone)) {}

    std::string id;
    double weight;
    std::optional<std::string> zone;
};

class Ring {
  public:
    /// Builds a ring (vnodes points per unit of weight, XXH3-64 seed). Throws Error.
    explicit Ring(const std::vector<NodeSpec> &nodes, uint32_t vnodes = 160, uint64_t seed = 0) {
        Arrays a(nodes);
        check(ring_new(a.ids.data(), a.id_lens.data(), a.weights.data(), a.zones.data(), a.zone_lens.data(),
                       nodes.size(), vnodes, seed, &handle_));
    }

    /// Builds a ring on any algorithm ("ring", "ketama", "ketama-spy",
    /// "libketama", "nginx", "jump", "rendezvous", "maglev", "slots"); a
    /// parameter left out (std::nullopt) gets its default, one given is
    /// passed as given (table_size 0 is RING_INVALID_TABLE_SIZE). Throws Error.
    static Ring with_algorithm(const std::vector<NodeSpec> &nodes, const std::string &algorithm,
                               std::optional<uint64_t> seed = std::nullopt,
                               std::optional<uint32_t> table_size = std::nullopt) {
        ring_options_t options{};
        options.algorithm = algorithm.c_str();
        if (seed) {
            options.fields |= RING_OPTION_SEED;
            options.seed = *seed;
        }
        if (table_size) {
            options.fields |= RING_OPTION_TABLE_SIZE;
            options.table_size = *table_size;
        }
        Arrays a(nodes);
        ring_t *handle = nullptr;
        check(ring_new_with_options(a.ids.data(), a.id_lens.data(), a.weights.data(), a.zones.data(),
                                    a.zone_lens.data(), nodes.size(), &options, &handle));
        return Ring(Adopt{}, handle);
    }

    /// Builds a ring from its JSON config. Throws Error.
    static Ring from_json(std::string_view json) {
        ring_t *handle = nullptr;
        check(ring_new_from_json(json.data(), json.size(), &handle));
        return Ring(Adopt{}, handle);
    }

    /// The algorithm's name.
    std::string_view algorithm() const noexcept { return ring_algorithm(handle_); }

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
        check(ring_get_node(handle_, bytes(key), key.size(), &index, &id, &len));
        return {id, len};
    }

    /// The index (construction order) of the node owning key. Throws Error.
    size_t get_index(std::string_view key) const {
        size_t index;
        check(ring_get_node(handle_, bytes(key), key.size(), &index, nullptr, nullptr));
        return index;
    }

    /// Up to n distinct node ids clockwise from key, the owner first. Throws Error.
    std::vector<std::string_view> get_n(std::string_view key, size_t n) const {
        std::vector<size_t> indices(std::min(n, size()));
        size_t count = 0;
        check(ring_get_nodes(handle_, bytes(key), key.size(), indices.data(), indices.size(), &count));
        std::vector<std::string_view> ids;
        for (size_t i = 0; i < count; i++) ids.push_back(node_id(indices[i]));
        return ids;
    }

    /// Number of nodes (drained ones included).
    size_t size() const noexcept { return ring_node_count(handle_); }

    /// The id of node index. Throws Error (RING_INDEX_OUT_OF_RANGE).
    std::string_view node_id(size_t index) const {
        const char *id;
        size_t len;
        check(ring_node_id(handle_, index, &id, &len));
        return {id, len};
    }

    /// XXH3-64 of key under the ring's seed.
    uint64_t hash_key(std::string_view key) const noexcept { return ring_hash_key(handle_, bytes(key), key.size()); }

    /// Order-independent 64-bit digest of the ring's config.
    uint64_t fingerprint() const noexcept { return ring_fingerprint(handle_); }

    /// A new ring with one node added. Throws Error.
    Ring with_node(const NodeSpec &node) const {
        ring_t *out = nullptr;
        check(ring_with_node(handle_, node.id.data(), node.id.size(), node.weight,
                             node.zone ? node.zone->data() : nullptr, node.zone ? node.zone->size() : 0, &out));
        return Ring(Adopt{}, out);
    }

    /// A new ring without node id. Throws Error (RING_UNKNOWN_NODE).
    Ring without_node(std::string_view id) const {
        ring_t *out = nullptr;
        check(ring_without_node(handle_, id.data(), id.size(), &out));
        return Ring(Adopt{}, out);
    }

    /// A new ring with node id at weight. Throws Error.
    Ring with_weight(std::string_view id, double weight) const {
        ring_t *out = nullptr;
        check(ring_with_weight(handle_, id.data(), id.size(), weight, &out));
        return Ring(Adopt{}, out);
    }

    /// The ring's JSON config.
    std::string to_json() const {
        char *json = nullptr;
        size_t len = 0;
        check(ring_to_json(handle_, &json, &len));
        std::string copy(json, len);
        ring_string_free(json);
        return copy;
    }

    /// The underlying handle, still owned by this object.
    const ring_t *handle() const noexcept { return handle_; }

  private:
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

    static const uint8_t *bytes(std::string_view text) noexcept {
        return reinterpret_cast<const uint8_t *>(text.data());
    }

    static void check(ring_result code) {
        if (code != RING_OK) throw Error(code, ring_last_error());
    }

    ring_t *handle_ = nullptr;
};

}  // namespace shardring

#endif  // RING_HPP
