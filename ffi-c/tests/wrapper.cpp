// Tests of include/ring.hpp: RAII reference counting, lookups, derivation
// and errors as exceptions.
#include <cmath>
#include <cstdio>
#include <string>

#include "ring.hpp"

static int passed, failed;
#define CHECK(cond, what)                                                        \
    do {                                                                         \
        if (cond) {                                                              \
            passed++;                                                            \
        } else {                                                                 \
            failed++;                                                            \
            std::fprintf(stderr, "FAIL %s:%d: %s\n", __FILE__, __LINE__, what); \
        }                                                                        \
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

int main() {
    shardring::Ring ring({{"a", 1.0}, {"b", 2.0, "east"}, {"c"}});
    CHECK(ring.size() == 3, "size");
    std::string_view owner = ring.get("user:42");
    CHECK(owner == ring.node_id(ring.get_index("user:42")), "get agrees with get_index");
    auto list = ring.get_n("user:42", 5);
    CHECK(list.size() == 3 && list[0] == owner, "get_n");

    // Copies share the handle; ids stay valid while any copy lives.
    std::string_view id;
    {
        shardring::Ring copy = ring;
        CHECK(copy.handle() == ring.handle(), "copy shares the handle");
        shardring::Ring moved = std::move(copy);
        id = moved.get("k");
    }
    CHECK(id == ring.get("k"), "id valid after copies are gone");

    shardring::Ring grown = ring.with_node({"d", 1.0});
    int only_to_d = 1;
    for (int k = 0; k < 3000; k++) {
        std::string key = "key-" + std::to_string(k);
        if (ring.get(key) != grown.get(key) && grown.get(key) != "d") only_to_d = 0;
    }
    CHECK(only_to_d, "adding d moves keys only to d");
    CHECK(grown.without_node("d").fingerprint() == ring.fingerprint(), "remove restores");
    CHECK(shardring::Ring::from_json(grown.to_json()).fingerprint() == grown.fingerprint(), "JSON round trip");
    CHECK(ring.with_weight("a", 0.0).get_n("k", 3).size() == 2, "drained node leaves lists");
    CHECK(ring.hash_key("k") == shardring::Ring(std::vector<shardring::NodeSpec>{"z"}).hash_key("k"), "hash depends on the seed only");

    CHECK(error_code([] { shardring::Ring({{"a"}, {"a"}}); }) == RING_DUPLICATE_ID, "duplicate id throws");
    CHECK(error_code([] { shardring::Ring({{"a", NAN}}); }) == RING_INVALID_WEIGHT, "NaN throws");
    CHECK(error_code([] { shardring::Ring(std::vector<shardring::NodeSpec>{}).get("k"); }) == RING_EMPTY_RING, "empty ring throws");
    CHECK(error_code([&] { ring.without_node("zz"); }) == RING_UNKNOWN_NODE, "unknown node throws");
    CHECK(error_code([&] { ring.node_id(7); }) == RING_INDEX_OUT_OF_RANGE, "index throws");
    CHECK(error_code([] { shardring::Ring::from_json("{"); }) == RING_INVALID_CONFIG, "bad JSON throws");
    shardring::Ring maglev = shardring::Ring::with_algorithm({{"a"}, {"b"}, {"c"}}, "maglev", 0, 251);
    CHECK(maglev.algorithm() == "maglev" && maglev.to_json().find("\"table_size\": 251") != std::string::npos,
          "Maglev ring with a table size");
    CHECK(error_code([] { shardring::Ring::with_algorithm({{"a"}}, "maglev", 0, 250); }) == RING_INVALID_TABLE_SIZE,
          "non-prime table throws");
    CHECK(error_code([] { shardring::Ring::with_algorithm({{"a"}}, "chord"); }) == RING_INVALID_CONFIG,
          "unknown algorithm throws");
    try {
        shardring::Ring({{"a", -1.0}});
    } catch (const shardring::Error &e) {
        CHECK(std::string(e.what()).find("-1") != std::string::npos, "message names the weight");
    }
    std::printf("C++ wrapper: %d passed, %d failed\n", passed, failed);
    return failed ? 1 : 0;
}
