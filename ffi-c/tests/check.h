/* A minimal assertion counter shared by the C tests: each CHECK counts a pass
 * or prints the failure; main() ends with CHECK_SUMMARY(). */
#ifndef SHARDRING_CHECK_H
#define SHARDRING_CHECK_H
#include <stdio.h>

static int check_passed, check_failed;

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

#define CHECK_SUMMARY(name)                                                       \
    (printf("%s: %d passed, %d failed\n", (name), check_passed, check_failed), \
     check_failed ? 1 : 0)

#endif
