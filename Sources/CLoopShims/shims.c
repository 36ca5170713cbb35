#define _GNU_SOURCE
#include "CLoopShims.h"
#include <errno.h>
#include <unistd.h>
#include <string.h>
#include <sys/syscall.h>
#include <malloc.h>

#ifndef SYS_pidfd_open
#define SYS_pidfd_open 434
#endif
#ifndef SYS_pidfd_send_signal
#define SYS_pidfd_send_signal 424
#endif

int cloop_pidfd_open(pid_t pid, unsigned int flags) {
    return (int)syscall(SYS_pidfd_open, pid, flags);
}

int cloop_pidfd_send_signal(int pidfd, int sig) {
    return (int)syscall(SYS_pidfd_send_signal, pidfd, sig, NULL, 0);
}

int cloop_malloc_trim(size_t pad) {
    return malloc_trim(pad);
}

size_t cloop_malloc_usable_size(void *pointer) {
    return malloc_usable_size(pointer);
}

pid_t cloop_gettid(void) {
    return (pid_t)syscall(SYS_gettid);
}

#include <sched.h>
int cloop_sched_getaffinity(pid_t tid, cpu_set_t *set) {
    return sched_getaffinity(tid, sizeof *set, set);
}

int cloop_sched_setaffinity(pid_t tid, const cpu_set_t *set) {
    return sched_setaffinity(tid, sizeof *set, set);
}

int cloop_epoll_ctl(int epfd, int op, int fd, uint32_t events, uint64_t token) {
    struct epoll_event ev;
    ev.events = events;
    ev.data.u64 = token;
    return epoll_ctl(epfd, op, fd, &ev);
}

int cloop_epoll_wait(int epfd, cloop_event *out, int max, int timeout_ms) {
    struct epoll_event evs[64];
    if (max > 64) max = 64;
    int n = epoll_wait(epfd, evs, max, timeout_ms);
    for (int i = 0; i < n; i++) {
        out[i].events = evs[i].events;
        out[i].token = evs[i].data.u64;
    }
    return n;
}

void cloop_sigset_empty(sigset_t *set) { sigemptyset(set); }
void cloop_sigset_add(sigset_t *set, int sig) { sigaddset(set, sig); }

#include <pthread.h>
void cloop_set_thread_name(const char *name) {
    char buf[16];
    strncpy(buf, name, 15);
    buf[15] = 0;
    pthread_setname_np(pthread_self(), buf);
}

int cloop_accept4(int fd, int flags) {
    return accept4(fd, NULL, NULL, flags);
}

int cloop_peercred(int fd, int *pid, unsigned int *uid, unsigned int *gid) {
    struct ucred cred;
    socklen_t len = sizeof cred;
    if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &len) != 0) return -1;
    *pid = cred.pid;
    *uid = cred.uid;
    *gid = cred.gid;
    return 0;
}

ssize_t cloop_recv_with_uid(int fd, void *buf, size_t len, int flags,
                            struct sockaddr_un *from, socklen_t *from_len,
                            unsigned int *uid, int *has_uid) {
    /* Room for one SCM_CREDENTIALS message, aligned as cmsg needs. */
    union {
        char bytes[CMSG_SPACE(sizeof(struct ucred))];
        struct cmsghdr align;
    } control;
    struct iovec iov = { .iov_base = buf, .iov_len = len };
    struct msghdr msg = {
        .msg_name = from, .msg_namelen = *from_len,
        .msg_iov = &iov, .msg_iovlen = 1,
        .msg_control = control.bytes, .msg_controllen = sizeof control.bytes,
    };
    *has_uid = 0;
    ssize_t n = recvmsg(fd, &msg, flags | MSG_CMSG_CLOEXEC);
    if (n < 0) return n;
    *from_len = msg.msg_namelen;
    for (struct cmsghdr *c = CMSG_FIRSTHDR(&msg); c != NULL; c = CMSG_NXTHDR(&msg, c)) {
        if (c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_CREDENTIALS &&
            c->cmsg_len == CMSG_LEN(sizeof(struct ucred))) {
            struct ucred cred;
            memcpy(&cred, CMSG_DATA(c), sizeof cred);
            *uid = cred.uid;
            *has_uid = 1;
        }
    }
    return n;
}

#include <spawn.h>
#include <fcntl.h>

int cloop_spawn(const char *path, char *const argv[], char *const envp[], const char *cwd,
                int stdout_fd, int stderr_fd, pid_t *pid) {
    posix_spawn_file_actions_t actions;
    posix_spawnattr_t attr;
    int rc = posix_spawn_file_actions_init(&actions);
    if (rc) return rc;
    rc = posix_spawnattr_init(&attr);
    if (rc) { posix_spawn_file_actions_destroy(&actions); return rc; }

    posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0);
    posix_spawn_file_actions_adddup2(&actions, stdout_fd, 1);
    posix_spawn_file_actions_adddup2(&actions, stderr_fd, 2);
    /* Nothing of the daemon's leaks into the child, CLOEXEC or not. */
    posix_spawn_file_actions_addclosefrom_np(&actions, 3);
    if (cwd) posix_spawn_file_actions_addchdir_np(&actions, cwd);

    /* The daemon blocks the signals it reads through a signalfd; a child
       must start with none blocked and every handler at its default. */
    sigset_t none, all;
    sigemptyset(&none);
    sigfillset(&all);
    posix_spawnattr_setsigmask(&attr, &none);
    posix_spawnattr_setsigdefault(&attr, &all);
    posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF);

    rc = posix_spawn(pid, path, &actions, &attr, argv, envp);
    posix_spawn_file_actions_destroy(&actions);
    posix_spawnattr_destroy(&attr);
    return rc;
}

int cloop_pipe(int fds[2]) {
    if (pipe2(fds, O_CLOEXEC) != 0) return -1;
    /* Only the daemon's read end is non-blocking: a child writing to a
       non-blocking stdout would see EAGAIN and give up. */
    int flags = fcntl(fds[0], F_GETFL);
    if (flags == -1 || fcntl(fds[0], F_SETFL, flags | O_NONBLOCK) != 0) {
        close(fds[0]);
        close(fds[1]);
        return -1;
    }
    return 0;
}
