/* The library's version: ring_version() equals the header's RING_VERSION_*
 * macros and the crate version (RING_CRATE_VERSION, passed by the Makefile
 * from Cargo.toml). */
#include <stdio.h>
#include <string.h>

#include "check.h"
#include "ring.h"

#ifndef RING_CRATE_VERSION
#error "compile with -DRING_CRATE_VERSION=\"X.Y.Z\" (the Makefile passes Cargo.toml's version)"
#endif

int main(void) {
    const char *version = ring_version();
    CHECK(version != NULL, "ring_version() is never NULL");
    CHECK(version == ring_version(), "a static string: the same pointer on every call");
    char macros[64];
    snprintf(macros, sizeof macros, "%d.%d.%d", RING_VERSION_MAJOR, RING_VERSION_MINOR, RING_VERSION_PATCH);
    CHECK(strcmp(version, macros) == 0, "ring_version() \"%s\" equals the header's macros %s", version, macros);
    CHECK(strcmp(version, RING_CRATE_VERSION) == 0, "ring_version() \"%s\" equals the crate version %s", version,
          RING_CRATE_VERSION);
    return CHECK_SUMMARY("C version");
}
