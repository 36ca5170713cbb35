// The floor under a sequential client's job: what the system calls and
// wake-ups of a server's round trip cost, with nothing else in the server.
//
// A client process sends one byte and waits for one back, N times, over a
// Unix stream socket. The server's first thread waits in epoll for the
// request and reads it; then either
//   one thread:  it sends the reply itself (a single-threaded server's shape), or
//   two threads: it writes an eventfd that a second thread waits on in its
//                own epoll, and that thread sends the reply (loopd's shape:
//                the main loop reads, a worker runs the job and answers).
// Prints the server's CPU (user + system, getrusage) per round trip.
//
//   cc -O2 -pthread Benchmarks/handoff-floor.c -o /tmp/handoff-floor && /tmp/handoff-floor [N]
#define _GNU_SOURCE
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <pthread.h>
#include <time.h>
#include <unistd.h>

static int wake_fd, conn_fd;

static double seconds(struct timeval t) { return t.tv_sec + t.tv_usec / 1e6; }

static void *replier(void *unused) {
    (void)unused;
    int ep = epoll_create1(0);
    struct epoll_event e = {.events = EPOLLIN};
    epoll_ctl(ep, EPOLL_CTL_ADD, wake_fd, &e);
    for (;;) {
        struct epoll_event ready[8];
        if (epoll_wait(ep, ready, 8, -1) <= 0) continue;
        uint64_t count;
        if (read(wake_fd, &count, sizeof count) != sizeof count) continue;
        for (uint64_t i = 0; i < count; i++) send(conn_fd, "r", 1, MSG_NOSIGNAL);
    }
    return NULL;
}

static void run(int threads, int n) {
    int pair[2];
    if (socketpair(AF_UNIX, SOCK_STREAM, 0, pair) != 0) { perror("socketpair"); exit(1); }
    pid_t client = fork();
    if (client == 0) {
        close(pair[0]);
        char byte;
        for (int i = 0; i < n; i++) {
            if (write(pair[1], "q", 1) != 1 || read(pair[1], &byte, 1) != 1) _exit(1);
        }
        _exit(0);
    }
    close(pair[1]);
    conn_fd = pair[0];
    wake_fd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
    pthread_t second;
    if (threads == 2) pthread_create(&second, NULL, replier, NULL);

    int ep = epoll_create1(0);
    struct epoll_event e = {.events = EPOLLIN};
    epoll_ctl(ep, EPOLL_CTL_ADD, conn_fd, &e);
    struct rusage before, after;
    getrusage(RUSAGE_SELF, &before);
    for (int done = 0; done < n;) {
        struct epoll_event ready[8];
        if (epoll_wait(ep, ready, 8, -1) <= 0) continue;
        char requests[64];
        ssize_t k = read(conn_fd, requests, sizeof requests);
        if (k <= 0) break;
        done += (int)k;
        for (ssize_t i = 0; i < k; i++) {
            if (threads == 2) {
                uint64_t one = 1;
                if (write(wake_fd, &one, sizeof one) != sizeof one) perror("eventfd");
            } else {
                send(conn_fd, "r", 1, MSG_NOSIGNAL);
            }
        }
    }
    int status;
    waitpid(client, &status, 0);
    getrusage(RUSAGE_SELF, &after);
    double user = seconds(after.ru_utime) - seconds(before.ru_utime);
    double system = seconds(after.ru_stime) - seconds(before.ru_stime);
    printf("%s: %.1f µs of CPU per round trip (user %.1f, system %.1f)\n",
           threads == 2 ? "two threads (eventfd hand-off)" : "one thread                    ",
           (user + system) / n * 1e6, user / n * 1e6, system / n * 1e6);
    // The second thread stays parked on its eventfd; the process ends soon.
    close(ep);
}

int main(int argc, char **argv) {
    int n = argc > 1 ? atoi(argv[1]) : 100000;
    if (n < 1) n = 100000;
    for (int round = 0; round < 3; round++) {
        run(1, n);
        run(2, n);
    }
    return 0;
}
