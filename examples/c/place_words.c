/* Places every word of a word list on the cluster of a JSON ring config and
 * prints the keys per node and an FNV-1a 64 digest of the placements.
 *
 * Build (from the repository root, after `make build-c`, which also links
 * target/release/libring.so.0.1, the SONAME the program will load, to cargo's
 * libring.so):
 *   cc -O2 -Iinclude examples/c/place_words.c -Ltarget/release -lring \
 *      -Wl,-rpath,"$PWD/target/release" -o build/place_words
 * or, after `make install PREFIX=$PREFIX` (installs ring.pc for pkg-config;
 * PKG_CONFIG_PATH is needed unless PREFIX is one pkg-config searches):
 *   export PKG_CONFIG_PATH=$PREFIX/lib/pkgconfig
 *   cc -O2 examples/c/place_words.c $(pkg-config --cflags --libs ring) -Wl,-rpath,$PREFIX/lib -o place_words
 *   cc -static -O2 examples/c/place_words.c $(pkg-config --cflags --libs --static ring) -o place_words
 * Run:
 *   build/place_words examples/cluster.json /usr/share/dict/words
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ring.h"

/* FNV-1a 64 over `len` bytes, continuing from `hash`. */
static uint64_t fnv1a(uint64_t hash, const void *data, size_t len) {
    const uint8_t *bytes = data;
    for (size_t i = 0; i < len; i++) hash = (hash ^ bytes[i]) * 0x100000001b3ULL;
    return hash;
}

static char *read_file(const char *path, size_t *len) {
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    fseek(f, 0, SEEK_END);
    long size = ftell(f);
    rewind(f);
    char *data = malloc((size_t)size + 1);
    *len = fread(data, 1, (size_t)size, f);
    fclose(f);
    return data;
}

/* The next line of `f` into *line (grown as needed, *cap bytes), without
 * its '\n'; its length, or -1 at the end of the file. Standard C, so the
 * example builds on Windows too (POSIX getline is not there). */
static long read_line(FILE *f, char **line, size_t *cap) {
    if (*cap == 0) {
        *line = malloc(*cap = 256);
        if (!*line) return -1;
    }
    size_t len = 0;
    while (fgets(*line + len, (int)(*cap - len), f)) {
        len += strlen(*line + len);
        if ((*line)[len - 1] == '\n') return (long)len - 1;
        if (len + 1 < *cap) break; /* the last line, without a '\n' */
        char *grown = realloc(*line, *cap * 2);
        if (!grown) return -1;
        *line = grown;
        *cap *= 2;
    }
    return len > 0 ? (long)len : -1;
}

int main(int argc, char **argv) {
    if (argc != 3) {
        fprintf(stderr, "usage: %s CLUSTER.json WORDS\n", argv[0]);
        return 2;
    }
    size_t config_len;
    char *config = read_file(argv[1], &config_len);
    if (!config) {
        perror(argv[1]);
        return 2;
    }
    ring_t *ring = NULL;
    ring_result rc = ring_new_from_json(config, config_len, &ring);
    free(config);
    if (rc != RING_OK) {
        fprintf(stderr, "%s: %s\n", argv[1], ring_last_error());
        return 2;
    }

    FILE *words = fopen(argv[2], "rb");
    if (!words) {
        perror(argv[2]);
        ring_free(ring);
        return 2;
    }
    size_t nodes = ring_node_count(ring);
    size_t *counts = calloc(nodes, sizeof *counts);
    uint64_t digest = 0xcbf29ce484222325ULL;
    size_t keys = 0, cap = 0;
    char *line = NULL;
    long len;
    while ((len = read_line(words, &line, &cap)) != -1) {
        size_t index, id_len;
        const char *id;
        if (ring_get_node(ring, (const uint8_t *)line, (size_t)len, &index, &id, &id_len) != RING_OK) {
            fprintf(stderr, "lookup failed: %s\n", ring_last_error());
            return 1;
        }
        digest = fnv1a(digest, line, (size_t)len);
        digest = fnv1a(digest, "\t", 1);
        digest = fnv1a(digest, id, id_len);
        digest = fnv1a(digest, "\n", 1);
        counts[index]++;
        keys++;
    }
    free(line);
    fclose(words);

    printf("C: %zu keys on %zu nodes\n", keys, nodes);
    for (size_t i = 0; i < nodes; i++) {
        const char *id;
        size_t id_len;
        ring_node_id(ring, i, &id, &id_len);
        printf("  %-10.*s %7zu  %5.2f%%\n", (int)id_len, id, counts[i], 100.0 * (double)counts[i] / (double)keys);
    }
    printf("digest %016llx\n", (unsigned long long)digest);
    free(counts);
    ring_free(ring);
    return 0;
}
