/* A C follower over TLS with a client certificate and etcd's auth
 * (ring_follower_new_etcd_secure): prints the ring's node ids, one per
 * line, or the error's name and message. py/tests/test_etcd_security.py
 * builds it against libring and runs it against its secured etcd.
 * Arguments: endpoint prefix ca cert key user password-file. */
#include <ring.h>
#include <stdio.h>
#include <string.h>

int main(int argc, char **argv) {
    if (argc != 8) {
        fprintf(stderr, "usage: %s endpoint prefix ca cert key user password-file\n", argv[0]);
        return 2;
    }
    ring_etcd_security_t security = {argv[3], argv[4], argv[5], argv[6], NULL, argv[7]};
    ring_follower_t *follower = NULL;
    ring_result rc = ring_follower_new_etcd_secure(argv[1], strlen(argv[1]), argv[2], strlen(argv[2]), &security,
                                                   5000, NULL, NULL, &follower);
    if (rc != RING_OK) {
        printf("%s: %s\n", ring_result_name(rc), ring_last_error());
        return 1;
    }
    ring_t *ring = NULL;
    ring_follower_ring(follower, &ring, NULL);
    for (size_t i = 0; i < ring_node_count(ring); i++) {
        const char *id;
        size_t len;
        ring_node_id(ring, i, &id, &len);
        printf("%.*s\n", (int)len, id);
    }
    ring_free(ring);
    ring_follower_free(follower);
    return 0;
}
