/* The C tests' launcher of real servers: etcd (Debian's etcd-server) as a
 * child process on free loopback ports with a temporary data dir, waited on
 * until it answers, and stopped by PID at exit (atexit), also when a check
 * fails. A server that cannot start ends the test with its output. */
#ifndef SHARDRING_SERVERS_H
#define SHARDRING_SERVERS_H
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

typedef struct {
    pid_t pid;
    int client_port;
    char url[64];
    char dir[64];
} etcd_server;

static etcd_server *etcd_running;

static int free_port(void) {
    int s = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    socklen_t n = sizeof a;
    if (s < 0 || bind(s, (struct sockaddr *)&a, sizeof a) || getsockname(s, (struct sockaddr *)&a, &n)) {
        perror("free_port");
        exit(2);
    }
    close(s);
    return ntohs(a.sin_port);
}

static void etcd_stop(void) {
    if (etcd_running && etcd_running->pid > 0) {
        kill(etcd_running->pid, SIGKILL);
        waitpid(etcd_running->pid, NULL, 0);
        etcd_running->pid = 0;
        char command[128];
        snprintf(command, sizeof command, "rm -rf %s", etcd_running->dir);
        if (system(command) != 0) fprintf(stderr, "could not remove %s\n", etcd_running->dir);
    }
}

/* Runs etcdctl against the server with `args` (a shell fragment); returns its exit status. */
static int etcdctl(const etcd_server *etcd, const char *args) {
    char command[1024];
    snprintf(command, sizeof command, "ETCDCTL_API=3 etcdctl --endpoints %s --dial-timeout 1s %s >/dev/null 2>&1",
             etcd->url, args);
    return system(command);
}

static void etcd_start(etcd_server *etcd) {
    strcpy(etcd->dir, "/tmp/shardring-etcd-XXXXXX");
    if (!mkdtemp(etcd->dir)) {
        perror("mkdtemp");
        exit(2);
    }
    etcd->client_port = free_port();
    int peer_port = free_port();
    snprintf(etcd->url, sizeof etcd->url, "http://127.0.0.1:%d", etcd->client_port);
    char peer[64], data[96], cluster[96], log[96];
    snprintf(peer, sizeof peer, "http://127.0.0.1:%d", peer_port);
    snprintf(data, sizeof data, "%s/data", etcd->dir);
    snprintf(cluster, sizeof cluster, "t=%s", peer);
    snprintf(log, sizeof log, "%s/etcd.log", etcd->dir);
    etcd->pid = fork();
    if (etcd->pid == 0) {
        if (!freopen(log, "w", stderr) || !freopen("/dev/null", "w", stdout)) _exit(127);
        execlp("etcd", "etcd", "--name", "t", "--data-dir", data, "--listen-client-urls", etcd->url,
               "--advertise-client-urls", etcd->url, "--listen-peer-urls", peer, "--initial-advertise-peer-urls",
               peer, "--initial-cluster", cluster, (char *)NULL);
        fprintf(stderr, "cannot run etcd (install Debian's etcd-server)\n");
        _exit(127);
    }
    etcd_running = etcd;
    atexit(etcd_stop);
    for (int attempt = 0; attempt < 150; attempt++) {
        if (etcdctl(etcd, "endpoint health") == 0) return;
        int status;
        if (waitpid(etcd->pid, &status, WNOHANG) == etcd->pid) {
            char command[128];
            snprintf(command, sizeof command, "tail -5 %s >&2", log);
            if (system(command) != 0) fprintf(stderr, "etcd exited\n");
            etcd->pid = 0;
            exit(2);
        }
        struct timespec pause = {0, 100 * 1000 * 1000};
        nanosleep(&pause, NULL);
    }
    fprintf(stderr, "etcd did not answer within 15 s\n");
    exit(2);
}
#endif
