/* ring_follower_*: a ring kept current from a config file and from a real
 * etcd (started by servers.h), events through the callback, the polled
 * epoch counter, waits, and the errors. */
#include "servers.h"

#include <pthread.h>
#include <ring.h>
#include <stdatomic.h>

#include "check.h"

#define PREFIX "/shardring/c-test"

static atomic_int changes, rejections;

static void on_event(void *userdata, uint32_t kind, int64_t revision, uint64_t fingerprint, const char *message,
                     size_t message_len) {
    (void)revision;
    (void)fingerprint;
    CHECK(userdata == (void *)&changes, "userdata passed through");
    if (kind == RING_FOLLOWER_CHANGED) atomic_fetch_add(&changes, 1);
    if (kind == RING_FOLLOWER_REJECTED) {
        atomic_fetch_add(&rejections, 1);
        CHECK(message_len > 0 && memmem(message, message_len, "members/bad", 11) != NULL, "rejected key named");
    }
}

static double seconds(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

static size_t node_count_of(ring_follower_t *follower, int64_t *revision) {
    ring_t *ring = NULL;
    CHECK(ring_follower_ring(follower, &ring, revision) == RING_OK, "ring_follower_ring");
    size_t count = ring_node_count(ring);
    ring_free(ring);
    return count;
}

static void write_file(const char *path, const char *json) {
    char temporary[256];
    snprintf(temporary, sizeof temporary, "%s.tmp", path);
    FILE *f = fopen(temporary, "w");
    fputs(json, f);
    fclose(f);
    rename(temporary, path);
}

static void file_follower(void) {
    char dir[] = "/tmp/shardring-file-XXXXXX";
    CHECK(mkdtemp(dir) != NULL, "mkdtemp");
    char path[128];
    snprintf(path, sizeof path, "%s/ring.json", dir);
    write_file(path, "{\"format_version\": 1, \"nodes\": [{\"id\": \"a\"}, {\"id\": \"b\"}]}");
    ring_follower_t *follower = NULL;
    CHECK(ring_follower_new_file(path, strlen(path), 5000, NULL, NULL, &follower) == RING_OK, "%s", ring_last_error());
    int64_t revision = 0;
    CHECK(node_count_of(follower, &revision) == 2 && revision == 1, "first read is revision 1");
    ring_t *kept = NULL;
    ring_follower_ring(follower, &kept, NULL);
    write_file(path, "{\"format_version\": 1, \"nodes\": [{\"id\": \"a\"}, {\"id\": \"b\"}, {\"id\": \"c\"}]}");
    int64_t held = 0;
    CHECK(ring_follower_wait(follower, 2, 10000, &held) == RING_OK && held == 2, "replaced file read: %s",
          ring_last_error());
    CHECK(node_count_of(follower, NULL) == 3, "three nodes now");
    CHECK(ring_node_count(kept) == 2, "a ring taken earlier is unchanged");
    ring_free(kept);
    CHECK(ring_follower_wait(follower, 99, 50, &held) == RING_TIMEOUT, "a revision never reached times out");
    ring_follower_free(follower);
    char command[160];
    snprintf(command, sizeof command, "rm -rf %s", dir);
    CHECK(system(command) == 0, "cleanup");
}

/* ring_follower_new_etcd_secure against a plain etcd: NULL security follows it as ring_follower_new_etcd
 * does; TLS settings meet a server that does not speak TLS and fail with that reason; files that cannot
 * be used fail before connecting, naming them. (TLS against a real TLS etcd: py/tests/test_etcd_security.py.) */
static void secure_against_plain(const etcd_server *etcd) {
    ring_follower_t *follower = NULL;
    CHECK(ring_follower_new_etcd_secure(etcd->url, strlen(etcd->url), PREFIX, strlen(PREFIX), NULL, 5000, NULL, NULL,
                                        &follower) == RING_OK,
          "NULL security: %s", ring_last_error());
    CHECK(node_count_of(follower, NULL) == 2, "follows the plain etcd");
    ring_follower_free(follower);
    char dir[] = "/tmp/shardring-pki-XXXXXX", ca[64], password[64], command[512];
    CHECK(mkdtemp(dir) != NULL, "temp dir");
    snprintf(ca, sizeof ca, "%s/ca.crt", dir);
    snprintf(command, sizeof command,
             "openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -days 1 -subj /CN=test-ca "
             "-keyout %s/ca.key -out %s >/dev/null 2>&1",
             dir, ca);
    CHECK(system(command) == 0, "openssl made a CA");
    const char *port = strrchr(etcd->url, ':');
    char https[64];
    snprintf(https, sizeof https, "https://127.0.0.1%s", port);
    ring_etcd_security_t security = {.ca_file = ca};
    /* A refusal, not a timeout (waiting would not help), within the timeout given (2 s) and a margin. */
    double started = seconds();
    CHECK(ring_follower_new_etcd_secure(https, strlen(https), PREFIX, strlen(PREFIX), &security, 2000, NULL, NULL,
                                        &follower) == RING_REFUSED,
          "TLS to a plain etcd is RING_REFUSED: %s", ring_last_error());
    CHECK(seconds() - started < 3.0, "refused within the timeout: %.2f s", seconds() - started);
    CHECK(strstr(ring_last_error(), "not speak TLS, use an http:// endpoint") != NULL ||
              strstr(ring_last_error(), "does not speak TLS") != NULL,
          "says why: %s", ring_last_error());
    CHECK(strstr(ring_last_error(), https) != NULL && strstr(ring_last_error(), "refused this client (TLS)") != NULL,
          "names the endpoint and the refusal: %s", ring_last_error());
    CHECK(ring_follower_new_etcd_secure(etcd->url, strlen(etcd->url), PREFIX, strlen(PREFIX), &security, 2000, NULL,
                                        NULL, &follower) == RING_INVALID_CONFIG &&
              strstr(ring_last_error(), "use https://") != NULL,
          "http:// beside a CA: %s", ring_last_error());
    ring_etcd_security_t missing = {.ca_file = "/nonexistent/ca.pem"};
    CHECK(ring_follower_new_etcd_secure(https, strlen(https), PREFIX, strlen(PREFIX), &missing, 2000, NULL, NULL,
                                        &follower) == RING_FILE &&
              strstr(ring_last_error(), "/nonexistent/ca.pem") != NULL,
          "a missing CA file, named: %s", ring_last_error());
    snprintf(password, sizeof password, "%s/password", dir);
    FILE *file = fopen(password, "w");
    CHECK(file != NULL && fputs("Pw-in-a-file-0x5e\n", file) >= 0 && fclose(file) == 0, "password file");
    ring_etcd_security_t open_file = {.user = "follower", .password_file = password};
    CHECK(ring_follower_new_etcd_secure(etcd->url, strlen(etcd->url), PREFIX, strlen(PREFIX), &open_file, 2000, NULL,
                                        NULL, &follower) == RING_FILE &&
              strstr(ring_last_error(), "readable by group or others") != NULL &&
              strstr(ring_last_error(), "Pw-in-a-file") == NULL,
          "a password file others can read, named, its content not shown: %s", ring_last_error());
    ring_etcd_security_t no_password = {.user = "follower"};
    CHECK(ring_follower_new_etcd_secure(etcd->url, strlen(etcd->url), PREFIX, strlen(PREFIX), &no_password, 2000,
                                        NULL, NULL, &follower) == RING_INVALID_CONFIG &&
              strstr(ring_last_error(), "\"follower\"") != NULL,
          "a user without a password: %s", ring_last_error());
    ring_etcd_security_t bad_utf8 = {.user = "\xff"};
    CHECK(ring_follower_new_etcd_secure(etcd->url, strlen(etcd->url), PREFIX, strlen(PREFIX), &bad_utf8, 2000, NULL,
                                        NULL, &follower) == RING_INVALID_UTF8,
          "a user that is not UTF-8");
    CHECK(ring_follower_new_etcd_secure(etcd->url, strlen(etcd->url), PREFIX, strlen(PREFIX), NULL, 2000, NULL, NULL,
                                        NULL) == RING_NULL_ARGUMENT,
          "NULL out");
    snprintf(command, sizeof command, "rm -rf %s", dir);
    CHECK(system(command) == 0, "cleanup");
}

static void etcd_follower(void) {
    static etcd_server etcd; /* static: the atexit handler stops it */
    etcd_start(&etcd);
    CHECK(etcdctl(&etcd, "put " PREFIX "/members/a '{\"weight\": 1}'") == 0, "put a");
    ring_follower_t *follower = NULL;
    CHECK(ring_follower_new_etcd(etcd.url, strlen(etcd.url), PREFIX, strlen(PREFIX), 10000, on_event, &changes,
                                 &follower) == RING_OK,
          "%s", ring_last_error());
    CHECK(node_count_of(follower, NULL) == 1, "one member");
    uint64_t epochs_before = 0;
    ring_follower_status(follower, NULL, NULL, NULL, NULL, &epochs_before);
    CHECK(etcdctl(&etcd, "put " PREFIX "/members/b '{\"weight\": 2}'") == 0, "put b");
    CHECK(etcdctl(&etcd, "put " PREFIX "/members/bad '{\"weight\": -1, \"x\": 1}'") == 0, "put bad");
    for (int i = 0; i < 1000 && (node_count_of(follower, NULL) < 2 || atomic_load(&rejections) == 0); i++) {
        struct timespec pause = {0, 10 * 1000 * 1000};
        nanosleep(&pause, NULL);
    }
    int64_t revision = 0;
    uint64_t fingerprint = 0, epochs = 0;
    uint8_t connected = 0;
    double stale = -1;
    CHECK(ring_follower_status(follower, &revision, &fingerprint, &connected, &stale, &epochs) == RING_OK, "status");
    CHECK(connected == 1 && stale == 0.0 && epochs > epochs_before, "connected, fresh, epochs counted");
    uint64_t epoch = 0;
    CHECK(ring_follower_epoch(follower, &epoch) == RING_OK && epoch == (uint64_t)revision,
          "one store read from the start: epoch %llu is the revision %lld", (unsigned long long)epoch,
          (long long)revision);
    CHECK(atomic_load(&changes) >= 1 && atomic_load(&rejections) == 1, "callbacks: %d changes, %d rejections",
          atomic_load(&changes), atomic_load(&rejections));
    ring_t *ring = NULL;
    ring_follower_ring(follower, &ring, NULL);
    const char *ids[] = {"a", "b"};
    size_t lens[] = {1, 1};
    double weights[] = {1, 2};
    ring_t *want = NULL;
    ring_new(ids, lens, weights, NULL, NULL, 2, 160, 0, &want);
    uint64_t got_fingerprint = ring_fingerprint(ring), want_fingerprint = ring_fingerprint(want);
    CHECK(got_fingerprint == want_fingerprint && got_fingerprint == fingerprint, "the members' ring");
    /* The fingerprint as the CLI prints an epoch's: the status's, in hex. */
    char hex[RING_FINGERPRINT_HEX_LEN], ring_hex[RING_FINGERPRINT_HEX_LEN], printed[32];
    snprintf(printed, sizeof printed, "%016llx", (unsigned long long)fingerprint);
    CHECK(ring_follower_fingerprint_hex(follower, hex, sizeof hex) == RING_OK && strcmp(hex, printed) == 0,
          "the follower's fingerprint text %s, its status %s", hex, printed);
    CHECK(ring_fingerprint_hex(ring, ring_hex, sizeof ring_hex) == RING_OK && strcmp(hex, ring_hex) == 0,
          "equals its ring's (every member active): %s", ring_hex);
    memset(hex, '#', sizeof hex);
    CHECK(ring_follower_fingerprint_hex(follower, hex, 16) == RING_BUFFER_TOO_SMALL && hex[0] == '#', "16 bytes");
    CHECK(ring_follower_fingerprint_hex(NULL, hex, sizeof hex) == RING_NULL_ARGUMENT && hex[0] == '#',
          "NULL follower");
    /* Lookups counted per node: 1,000 gets on the follower's ring. */
    uint64_t counted[2] = {0, 0}, before[2] = {0, 0};
    for (int n = 0; n < 2; n++) ring_follower_lookup_count(follower, ids[n], 1, &before[n]);
    uint64_t placed[2] = {0, 0};
    for (int i = 0; i < 1000; i++) {
        char key[16];
        size_t owner = 0;
        int len = snprintf(key, sizeof key, "key-%d", i);
        ring_get_node(ring, (const uint8_t *)key, (size_t)len, &owner, NULL, NULL);
        placed[owner]++;
    }
    for (int n = 0; n < 2; n++) {
        CHECK(ring_follower_lookup_count(follower, ids[n], 1, &counted[n]) == RING_OK, "lookup count");
        CHECK(counted[n] - before[n] == placed[n], "node %s: %llu lookups counted, %llu made", ids[n],
              (unsigned long long)(counted[n] - before[n]), (unsigned long long)placed[n]);
    }
    uint64_t none = 7;
    CHECK(ring_follower_lookup_count(follower, "zz", 2, &none) == RING_OK && none == 0, "an id never held: 0");
    CHECK(ring_follower_lookup_count(follower, "a", 1, NULL) == RING_NULL_ARGUMENT, "NULL out_count");
    char *metrics = NULL;
    size_t metrics_len = 0;
    CHECK(ring_follower_metrics(follower, &metrics, &metrics_len) == RING_OK && strlen(metrics) == metrics_len,
          "metrics");
    char line[96];
    snprintf(line, sizeof line, "shardring_lookups_total{node=\"a\"} %llu\n", (unsigned long long)counted[0]);
    CHECK(strstr(metrics, line) != NULL, "the metrics hold %s", line);
    CHECK(strstr(metrics, printed) != NULL && strstr(metrics, "# EOF") != NULL, "fingerprint and EOF");
    ring_string_free(metrics);
    CHECK(ring_follower_metrics(follower, NULL, &metrics_len) == RING_NULL_ARGUMENT, "NULL out_text");
    ring_free(want);
    ring_free(ring);
    int64_t held = 0;
    CHECK(ring_follower_wait(follower, revision, 1000, &held) == RING_OK && held >= revision, "wait for a held revision");
    ring_follower_free(follower);
    secure_against_plain(&etcd);
    etcd_stop();
}

static void errors(void) {
    ring_follower_t *follower = NULL;
    CHECK(ring_follower_new_etcd("nowhere", 7, PREFIX, strlen(PREFIX), 100, NULL, NULL, &follower) ==
              RING_INVALID_CONFIG,
          "a bad endpoint");
    CHECK(strstr(ring_last_error(), "nowhere") != NULL, "names it: %s", ring_last_error());
    const char *unreachable = "http://127.0.0.1:1";
    CHECK(ring_follower_new_etcd(unreachable, strlen(unreachable), PREFIX, strlen(PREFIX), 300, NULL, NULL,
                                 &follower) == RING_TIMEOUT,
          "unreachable etcd: a timeout, not a refusal: %s", ring_last_error());
    CHECK(ring_follower_new_etcd(unreachable, strlen(unreachable), "/", 1, 300, NULL, NULL, &follower) ==
              RING_INVALID_CONFIG,
          "an empty prefix");
    CHECK(ring_follower_new_file("/nonexistent/ring.json", 22, 200, NULL, NULL, &follower) == RING_FILE,
          "a missing file");
    CHECK(strstr(ring_last_error(), "/nonexistent/ring.json") != NULL, "names it: %s", ring_last_error());
    CHECK(strcmp(ring_result_name(RING_FILE), "RING_FILE") == 0, "its code name");
    CHECK(ring_follower_new_file("x", 1, 100, NULL, NULL, NULL) == RING_NULL_ARGUMENT, "NULL out");
    CHECK(ring_follower_new_file(NULL, 3, 100, NULL, NULL, &follower) == RING_NULL_ARGUMENT, "NULL path");
    CHECK(ring_follower_new_file("\xff", 1, 100, NULL, NULL, &follower) == RING_INVALID_UTF8, "non-UTF-8 path");
    ring_t *ring = NULL;
    CHECK(ring_follower_ring(NULL, &ring, NULL) == RING_NULL_ARGUMENT, "NULL follower");
    CHECK(ring_follower_status(NULL, NULL, NULL, NULL, NULL, NULL) == RING_NULL_ARGUMENT, "NULL follower");
    uint64_t epoch = 7;
    CHECK(ring_follower_epoch(NULL, &epoch) == RING_NULL_ARGUMENT && epoch == 7, "NULL follower");
    CHECK(ring_follower_wait(NULL, 1, 1, NULL) == RING_NULL_ARGUMENT, "NULL follower");
    CHECK(strcmp(ring_result_name(RING_TIMEOUT), "RING_TIMEOUT") == 0, "code name");
    CHECK(RING_REFUSED == 25 && strcmp(ring_result_name(RING_REFUSED), "RING_REFUSED") == 0, "RING_REFUSED's name");
    ring_follower_free(NULL);
}

int main(void) {
    file_follower();
    etcd_follower();
    errors();
    return CHECK_SUMMARY("follower");
}
