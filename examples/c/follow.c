/* A follower process, as every application server runs one: follows the
 * ring in etcd (or a config file) and prints each epoch as a JSON line,
 * {"lang": "c", "revision": R, "fingerprint": "16 hex digits", "at_us": T}
 * (at_us: wall clock in microseconds once the new ring is in place). On
 * stdin, "digest N" prints {"digest": "16 hex digits", "revision": R}:
 * XXH3-64 (seed 0) of the owners of keys key-0 .. key-(N-1), each followed by
 * a newline. "quit" or end of input exits.
 *
 * Usage: follow --etcd URL --prefix P | follow --file PATH
 * (the same protocol as membership/examples/follow.rs,
 * examples/python/follow.py and examples/node/follow.mjs). */
#define _POSIX_C_SOURCE 200809L
#include <inttypes.h>
#include <pthread.h>
#include <ring.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static pthread_mutex_t out = PTHREAD_MUTEX_INITIALIZER;
static int64_t printed = -1; /* the last revision printed, under `out` */

static long long now_us(void) {
    struct timespec t;
    clock_gettime(CLOCK_REALTIME, &t);
    return (long long)t.tv_sec * 1000000 + t.tv_nsec / 1000;
}

/* Prints an epoch once (the callback also reports the first ring, read
 * while ring_follower_new_etcd waits). */
static void print_epoch(int64_t revision, uint64_t fingerprint) {
    pthread_mutex_lock(&out);
    if (revision <= printed) {
        pthread_mutex_unlock(&out);
        return;
    }
    printed = revision;
    printf("{\"lang\": \"c\", \"revision\": %" PRId64 ", \"fingerprint\": \"%016" PRIx64 "\", \"at_us\": %lld}\n",
           revision, fingerprint, now_us());
    fflush(stdout);
    pthread_mutex_unlock(&out);
}

/* Called on the follower's thread once the new ring is in place. */
static void on_event(void *userdata, uint32_t kind, int64_t revision, uint64_t fingerprint, const char *message,
                     size_t message_len) {
    (void)userdata;
    if (kind == RING_FOLLOWER_CHANGED || kind == RING_FOLLOWER_REVISION) print_epoch(revision, fingerprint);
    if (kind == RING_FOLLOWER_REJECTED) fprintf(stderr, "rejected: %.*s\n", (int)message_len, message);
}

int main(int argc, char **argv) {
    const char *etcd = NULL, *prefix = NULL, *file = NULL;
    for (int i = 1; i + 1 < argc; i += 2) {
        if (strcmp(argv[i], "--etcd") == 0) etcd = argv[i + 1];
        if (strcmp(argv[i], "--prefix") == 0) prefix = argv[i + 1];
        if (strcmp(argv[i], "--file") == 0) file = argv[i + 1];
    }
    ring_follower_t *follower = NULL;
    ring_result r = file ? ring_follower_new_file(file, strlen(file), 5000, on_event, NULL, &follower)
                    : etcd && prefix
                        ? ring_follower_new_etcd(etcd, strlen(etcd), prefix, strlen(prefix), 5000, on_event, NULL, &follower)
                        : RING_NULL_ARGUMENT;
    if (r != RING_OK) {
        fprintf(stderr, "follow: %s: %s\n", ring_result_name(r), file || etcd ? ring_last_error() : "usage: follow --etcd URL --prefix P | --file PATH");
        return 2;
    }
    int64_t revision = 0;
    uint64_t fingerprint = 0;
    ring_follower_status(follower, &revision, &fingerprint, NULL, NULL, NULL);
    print_epoch(revision, fingerprint);
    /* XXH3-64 with seed 0 of any bytes: the key hash of an empty "ring" ring. */
    ring_t *hasher = NULL;
    ring_new(NULL, NULL, NULL, NULL, NULL, 0, 160, 0, &hasher);
    char line[256];
    while (fgets(line, sizeof line, stdin)) {
        unsigned long n = 0;
        if (sscanf(line, "digest %lu", &n) == 1) {
            ring_t *ring = NULL;
            int64_t at = 0;
            ring_follower_ring(follower, &ring, &at);
            size_t cap = n * 24 + 1, len = 0;
            char *owners = malloc(cap);
            for (unsigned long i = 0; i < n && owners; i++) {
                char key[32];
                int key_len = snprintf(key, sizeof key, "key-%lu", i);
                size_t index, id_len;
                const char *id;
                if (ring_get_node(ring, (const uint8_t *)key, (size_t)key_len, &index, &id, &id_len) != RING_OK) id_len = 0;
                if (len + id_len + 1 > cap) {
                    cap = 2 * (len + id_len + 1);
                    owners = realloc(owners, cap);
                }
                memcpy(owners + len, id, id_len);
                owners[len + id_len] = '\n';
                len += id_len + 1;
            }
            uint64_t digest = ring_hash_key(hasher, (const uint8_t *)owners, len);
            free(owners);
            ring_free(ring);
            pthread_mutex_lock(&out);
            printf("{\"digest\": \"%016" PRIx64 "\", \"revision\": %" PRId64 "}\n", digest, at);
            fflush(stdout);
            pthread_mutex_unlock(&out);
        } else if (strncmp(line, "quit", 4) == 0) {
            break;
        }
    }
    ring_free(hasher);
    ring_follower_free(follower);
    return 0;
}
