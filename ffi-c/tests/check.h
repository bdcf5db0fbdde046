/* A minimal assertion counter shared by the C tests: each CHECK counts a pass
 * or prints the failure; main() ends with CHECK_SUMMARY().
 *
 * Including this header also asserts, for every call a test makes to a
 * function of ring.h that returns a ring_result, that the call did not
 * return RING_PANIC (a panic caught at the boundary is a bug even where a
 * test expects some error): each such function name is a macro below that
 * passes the result through check_no_panic. `make test-c` fails when a
 * ring_result function of ring.h has no macro here. */
#ifndef SHARDRING_CHECK_H
#define SHARDRING_CHECK_H
#include <stdatomic.h>
#include <stdio.h>

#include "ring.h"

static atomic_int check_passed, check_failed;
/* Calls to ring_result functions, and those of them that returned RING_PANIC. */
static atomic_ulong check_ring_calls, check_ring_panics;

#define CHECK(cond, ...)                                          \
    do {                                                          \
        if (cond) {                                               \
            check_passed++;                                       \
        } else {                                                  \
            check_failed++;                                       \
            fprintf(stderr, "FAIL %s:%d: ", __FILE__, __LINE__);  \
            fprintf(stderr, __VA_ARGS__);                         \
            fputc('\n', stderr);                                  \
        }                                                         \
    } while (0)

/* Counts a ring_result call and fails the test when it returned RING_PANIC. */
static inline ring_result check_no_panic(ring_result rc, const char *function, const char *file, int line) {
    check_ring_calls++;
    if (rc == RING_PANIC) {
        check_ring_panics++;
        check_failed++;
        fprintf(stderr, "FAIL %s:%d: %s returned RING_PANIC (%s)\n", file, line, function, ring_last_error());
    }
    return rc;
}

/* A function-like macro is not expanded again inside its own expansion, so
 * each of these calls the real function. */
#define RING_NO_PANIC(function, ...) check_no_panic(function(__VA_ARGS__), #function, __FILE__, __LINE__)
#define ring_new(...) RING_NO_PANIC(ring_new, __VA_ARGS__)
#define ring_new_with_options_sized(...) RING_NO_PANIC(ring_new_with_options_sized, __VA_ARGS__)
#define ring_new_from_json(...) RING_NO_PANIC(ring_new_from_json, __VA_ARGS__)
#define ring_to_json(...) RING_NO_PANIC(ring_to_json, __VA_ARGS__)
#define ring_node_id(...) RING_NO_PANIC(ring_node_id, __VA_ARGS__)
#define ring_node_weight(...) RING_NO_PANIC(ring_node_weight, __VA_ARGS__)
#define ring_get_node(...) RING_NO_PANIC(ring_get_node, __VA_ARGS__)
#define ring_get_node_by_hash(...) RING_NO_PANIC(ring_get_node_by_hash, __VA_ARGS__)
#define ring_get_node_batch(...) RING_NO_PANIC(ring_get_node_batch, __VA_ARGS__)
#define ring_get_nodes(...) RING_NO_PANIC(ring_get_nodes, __VA_ARGS__)
#define ring_fingerprint_hex(...) RING_NO_PANIC(ring_fingerprint_hex, __VA_ARGS__)
#define ring_with_node(...) RING_NO_PANIC(ring_with_node, __VA_ARGS__)
#define ring_without_node(...) RING_NO_PANIC(ring_without_node, __VA_ARGS__)
#define ring_with_weight(...) RING_NO_PANIC(ring_with_weight, __VA_ARGS__)
#define ring_ownership(...) RING_NO_PANIC(ring_ownership, __VA_ARGS__)
#define ring_diff(...) RING_NO_PANIC(ring_diff, __VA_ARGS__)
#define ring_diff_arc(...) RING_NO_PANIC(ring_diff_arc, __VA_ARGS__)
#define ring_diff_flow(...) RING_NO_PANIC(ring_diff_flow, __VA_ARGS__)
#define ring_tracker_new(...) RING_NO_PANIC(ring_tracker_new, __VA_ARGS__)
#define ring_tracker_new_haproxy(...) RING_NO_PANIC(ring_tracker_new_haproxy, __VA_ARGS__)
#define ring_tracker_acquire(...) RING_NO_PANIC(ring_tracker_acquire, __VA_ARGS__)
#define ring_tracker_release(...) RING_NO_PANIC(ring_tracker_release, __VA_ARGS__)
#define ring_tracker_swap(...) RING_NO_PANIC(ring_tracker_swap, __VA_ARGS__)
#define ring_tracker_load(...) RING_NO_PANIC(ring_tracker_load, __VA_ARGS__)
#define ring_follower_new_etcd(...) RING_NO_PANIC(ring_follower_new_etcd, __VA_ARGS__)
#define ring_follower_new_etcd_secure(...) RING_NO_PANIC(ring_follower_new_etcd_secure, __VA_ARGS__)
#define ring_follower_new_file(...) RING_NO_PANIC(ring_follower_new_file, __VA_ARGS__)
#define ring_follower_ring(...) RING_NO_PANIC(ring_follower_ring, __VA_ARGS__)
#define ring_follower_transition(...) RING_NO_PANIC(ring_follower_transition, __VA_ARGS__)
#define ring_follower_status(...) RING_NO_PANIC(ring_follower_status, __VA_ARGS__)
#define ring_follower_epoch(...) RING_NO_PANIC(ring_follower_epoch, __VA_ARGS__)
#define ring_follower_fingerprint_hex(...) RING_NO_PANIC(ring_follower_fingerprint_hex, __VA_ARGS__)
#define ring_follower_lookup_count(...) RING_NO_PANIC(ring_follower_lookup_count, __VA_ARGS__)
#define ring_follower_metrics(...) RING_NO_PANIC(ring_follower_metrics, __VA_ARGS__)
#define ring_follower_wait(...) RING_NO_PANIC(ring_follower_wait, __VA_ARGS__)
#define ring_transition_new_from_json(...) RING_NO_PANIC(ring_transition_new_from_json, __VA_ARGS__)
#define ring_transition_between(...) RING_NO_PANIC(ring_transition_between, __VA_ARGS__)
#define ring_transition_read_nodes(...) RING_NO_PANIC(ring_transition_read_nodes, __VA_ARGS__)
#define ring_transition_write_nodes(...) RING_NO_PANIC(ring_transition_write_nodes, __VA_ARGS__)
#define ring_transition_route(...) RING_NO_PANIC(ring_transition_route, __VA_ARGS__)
#define ring_transition_handoff_mark(...) RING_NO_PANIC(ring_transition_handoff_mark, __VA_ARGS__)
#define ring_transition_ring(...) RING_NO_PANIC(ring_transition_ring, __VA_ARGS__)
#define ring_transition_state(...) RING_NO_PANIC(ring_transition_state, __VA_ARGS__)
#define ring_hot_keys_new(...) RING_NO_PANIC(ring_hot_keys_new, __VA_ARGS__)
#define ring_hot_keys_observe(...) RING_NO_PANIC(ring_hot_keys_observe, __VA_ARGS__)
#define ring_watch_hot_keys(...) RING_NO_PANIC(ring_watch_hot_keys, __VA_ARGS__)
#define ring_hot_keys_top(...) RING_NO_PANIC(ring_hot_keys_top, __VA_ARGS__)
#define ring_hot_top_key(...) RING_NO_PANIC(ring_hot_top_key, __VA_ARGS__)
#define ring_hot_set_new_from_json(...) RING_NO_PANIC(ring_hot_set_new_from_json, __VA_ARGS__)
#define ring_hot_set_plan(...) RING_NO_PANIC(ring_hot_set_plan, __VA_ARGS__)
#define ring_follower_plan(...) RING_NO_PANIC(ring_follower_plan, __VA_ARGS__)
#define ring_near_cache_new(...) RING_NO_PANIC(ring_near_cache_new, __VA_ARGS__)
#define ring_near_cache_put(...) RING_NO_PANIC(ring_near_cache_put, __VA_ARGS__)
#define ring_near_cache_get(...) RING_NO_PANIC(ring_near_cache_get, __VA_ARGS__)
#define ring_near_cache_remove(...) RING_NO_PANIC(ring_near_cache_remove, __VA_ARGS__)
#define ring_near_cache_stats(...) RING_NO_PANIC(ring_near_cache_stats, __VA_ARGS__)
#define ring_follower_report_near_cache(...) RING_NO_PANIC(ring_follower_report_near_cache, __VA_ARGS__)

/* Prints the counts and returns main's exit code. */
#define CHECK_SUMMARY(name)                                                                                  \
    (printf("%s: %d passed, %d failed; %lu ring_result calls, %lu returned RING_PANIC\n", (name),           \
            (int)check_passed, (int)check_failed, (unsigned long)check_ring_calls,                           \
            (unsigned long)check_ring_panics),                                                               \
     check_failed ? 1 : 0)

#endif
