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

#include <sys/mman.h>
#include <sys/prctl.h>
#include <linux/capability.h>
#include <sys/wait.h>

#ifndef SYS_close_range
#define SYS_close_range 436
#endif
#ifndef SYS_landlock_create_ruleset
#define SYS_landlock_create_ruleset 444
#endif
#ifndef SYS_landlock_restrict_self
#define SYS_landlock_restrict_self 446
#endif
#ifndef PR_CAP_AMBIENT
#define PR_CAP_AMBIENT 47
#define PR_CAP_AMBIENT_CLEAR_ALL 4
#endif

/* Landlock's ruleset attributes as of ABI 6 (scopes); Debian 12's headers
   predate the `scoped` field. */
struct cloop_landlock_attr {
    uint64_t handled_access_fs;
    uint64_t handled_access_net;
    uint64_t scoped;
};

int cloop_restore_dumpable(void) {
    int dumpable = prctl(PR_GET_DUMPABLE, 0, 0, 0, 0);
    if (dumpable < 0) return -1;
    if (dumpable == 1) return 0;
    return prctl(PR_SET_DUMPABLE, 1, 0, 0, 0) == 0 ? 1 : -1;
}

int cloop_landlock_abi(void) {
    long abi = syscall(SYS_landlock_create_ruleset, NULL, 0, 1 /* LANDLOCK_CREATE_RULESET_VERSION */);
    return abi < 0 ? 0 : (int)abi;
}

/* Shared by the parent and the child (the child runs in the parent's
   memory until it executes): the child writes here only when a step
   fails, then exits. */
struct contained_start {
    const cloop_contained_spec *spec;
    pid_t parent;
    int failed_step;
    int error;
};

/* The kernel's struct sigaction (x86-64 and arm64 alike), for the raw call. */
struct contained_sigaction {
    void (*handler)(int);
    unsigned long flags;
    void (*restorer)(void);
    uint64_t mask;
};

/* stdio onto `to`: dup3, or, when it is already there, only without
   close-on-exec. */
__attribute__((no_sanitize("address", "thread", "undefined")))
static long contained_move(int from, int to) {
    if (from == to) return syscall(SYS_fcntl, to, F_SETFD, 0);
    return syscall(SYS_dup3, from, to, 0);
}

/* The child's side. It runs on a stack of its own in the parent's address
   space, with every signal blocked, while the parent's calling thread
   waits (CLONE_VFORK); the parent's other threads go on. So it touches
   nothing but its stack and `start`, and makes plain system calls only:
   glibc's setuid() and friends would broadcast to the parent's threads,
   whose memory it shares, and a sanitizer's wrappers (sigaction, open,
   prctl, ...) would change the sanitizer's state for the parent's thread.
   For the same reason it is not instrumented. */
__attribute__((no_sanitize("address", "thread", "undefined")))
static int contained_child(void *arg) {
    struct contained_start *start = arg;
    const cloop_contained_spec *spec = start->spec;
    int step = CLOOP_STEP_SETSID;

    struct contained_sigaction dfl = { 0, 0, 0, 0 };
    for (int sig = 1; sig < _NSIG; sig++) {
        /* SIGKILL and SIGSTOP refuse (EINVAL): they are at their defaults anyway. */
        syscall(SYS_rt_sigaction, sig, &dfl, NULL, sizeof dfl.mask);
    }

    if (syscall(SYS_setsid) < 0) goto fail;

    if (spec->cgroup_procs_fd >= 0) {
        step = CLOOP_STEP_CGROUP;
        /* "0" moves the writing process. */
        long written = syscall(SYS_write, spec->cgroup_procs_fd, "0", 1);
        if (written != 1) { if (written >= 0) errno = EIO; goto fail; }
    }

    if (spec->set_ids) {
        step = CLOOP_STEP_SETGROUPS;
        if (syscall(SYS_setgroups, spec->group_count, spec->groups) < 0) goto fail;
        step = CLOOP_STEP_SETGID;
        if (syscall(SYS_setresgid, spec->gid, spec->gid, spec->gid) < 0) goto fail;
        step = CLOOP_STEP_SETUID;
        if (syscall(SYS_setresuid, spec->uid, spec->uid, spec->uid) < 0) goto fail;
    }
    /* A daemon that may switch users holds that capability as an ambient
       one (a non-root service user), and a switch between two users who are
       not root keeps every capability: ambient ones would pass through
       execve to the job, and permitted ones to a program with file
       capabilities (no new privileges still grants what was held). */
    step = CLOOP_STEP_CAPABILITIES;
    if (syscall(SYS_prctl, PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0) < 0 && errno != EINVAL) goto fail;
    struct __user_cap_header_struct cap_header = { _LINUX_CAPABILITY_VERSION_3, 0 };
    struct __user_cap_data_struct no_caps[_LINUX_CAPABILITY_U32S_3];
    memset(no_caps, 0, sizeof no_caps);
    if (syscall(SYS_capset, &cap_header, no_caps) < 0) goto fail;
    step = CLOOP_STEP_NO_NEW_PRIVS;
    if (syscall(SYS_prctl, PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0) goto fail;
    /* After the ids: changing credentials clears the parent-death signal. */
    step = CLOOP_STEP_PDEATHSIG;
    if (syscall(SYS_prctl, PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0) < 0) goto fail;
    if (syscall(SYS_getppid) != start->parent) { errno = ESRCH; goto fail; }

    if (spec->landlock_scope) {
        step = CLOOP_STEP_LANDLOCK;
        struct cloop_landlock_attr attr = { 0, 0, spec->landlock_scope };
        long ruleset = syscall(SYS_landlock_create_ruleset, &attr, sizeof attr, 0);
        if (ruleset < 0) goto fail;
        long rc = syscall(SYS_landlock_restrict_self, (int)ruleset, 0);
        syscall(SYS_close, (int)ruleset);
        if (rc < 0) goto fail;
    }

    step = CLOOP_STEP_CHDIR;
    if (spec->cwd && syscall(SYS_chdir, spec->cwd) != 0) goto fail;

    step = CLOOP_STEP_STDIO;
    long null = syscall(SYS_openat, AT_FDCWD, "/dev/null", O_RDONLY | O_CLOEXEC);
    if (null < 0 || contained_move((int)null, 0) < 0) goto fail;
    if (contained_move(spec->stdout_fd, 1) < 0 || contained_move(spec->stderr_fd, 2) < 0) goto fail;
    step = CLOOP_STEP_CLOSE;
    if (syscall(SYS_close_range, 3, ~0U, 0) < 0) {
        struct rlimit files;
        if (syscall(SYS_prlimit64, 0, RLIMIT_NOFILE, NULL, &files) != 0) goto fail;
        for (rlim_t fd = 3; fd < files.rlim_cur && fd < 1048576; fd++) syscall(SYS_close, (int)fd);
    }

    /* Last: a descriptor limit below the daemon's open descriptors must not
       stop the steps above, and lowering a limit needs no privilege. */
    step = CLOOP_STEP_RLIMIT;
    for (int i = 0; i < spec->limit_count; i++) {
        struct rlimit limit = { .rlim_cur = spec->limits[i].soft, .rlim_max = spec->limits[i].hard };
        if (syscall(SYS_prlimit64, 0, spec->limits[i].resource, &limit, NULL) < 0) goto fail;
    }

    step = CLOOP_STEP_EXEC;
    uint64_t none = 0;
    syscall(SYS_rt_sigprocmask, SIG_SETMASK, &none, NULL, sizeof none);
    syscall(SYS_execve, spec->path, spec->argv, spec->envp);

fail:
    start->failed_step = step;
    start->error = errno ? errno : EINVAL;
    syscall(SYS_exit_group, 127);
    return 127;
}

/* glibc's clone under its own name: sanitizers replace `clone` with a
   wrapper that takes every clone for a fork, which one that shares memory
   is not. */
extern int __clone(int (*fn)(void *), void *stack, int flags, void *arg, ...);

static pthread_mutex_t switching_child = PTHREAD_MUTEX_INITIALIZER;

int cloop_spawn_contained(const cloop_contained_spec *spec, pid_t *pid, int *failed_step) {
    /* The child's stack: its own mapping, as glibc's posix_spawn uses. */
    const size_t stack_size = 256 * 1024;
    void *stack = mmap(NULL, stack_size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_STACK, -1, 0);
    if (stack == MAP_FAILED) { *failed_step = CLOOP_STEP_STACK; return errno; }

    struct contained_start start = { .spec = spec, .parent = getpid(), .failed_step = 0, .error = 0 };
    /* The child switches users while it still shares this memory, and the
       kernel then marks that memory, ours too, not dumpable: once the
       child has left it, it is set back. One switching child at a time:
       another's switch must not happen between this one's read and its
       restore (which would leave loopd not dumpable), and no restore may
       happen while a child that runs as the job's user still shares the
       memory (which would let that user read and write it). */
    if (spec->set_ids) pthread_mutex_lock(&switching_child);
    int dumpable = prctl(PR_GET_DUMPABLE, 0, 0, 0, 0);
    /* Every signal blocked across the clone: no handler may run in the
       child while it shares this memory. The child resets them. */
    sigset_t all, old;
    sigfillset(&all);
    pthread_sigmask(SIG_SETMASK, &all, &old);
    pid_t child = __clone(contained_child, (char *)stack + stack_size, CLONE_VM | CLONE_VFORK | SIGCHLD, &start);
    int clone_error = errno;
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    munmap(stack, stack_size);
    if (spec->set_ids) {
        if (dumpable == 1) prctl(PR_SET_DUMPABLE, 1, 0, 0, 0);
        pthread_mutex_unlock(&switching_child);
    }

    if (child < 0) { *failed_step = CLOOP_STEP_CLONE; return clone_error; }
    if (start.failed_step != 0) {
        int status;
        while (waitpid(child, &status, 0) < 0 && errno == EINTR) {}
        *failed_step = start.failed_step;
        return start.error;
    }
    *pid = child;
    *failed_step = CLOOP_STEP_NONE;
    return 0;
}

int cloop_reap_with_usage(pid_t pid, int *status, struct rusage *usage) {
    pid_t r;
    do { r = wait4(pid, status, WNOHANG, usage); } while (r < 0 && errno == EINTR);
    if (r < 0) return -1;
    return r == pid ? 1 : 0;
}

int cloop_ended_without_reaping(pid_t pid, int *status) {
    siginfo_t info;
    memset(&info, 0, sizeof info);
    int r;
    do { r = waitid(P_PID, (id_t)pid, &info, WEXITED | WNOHANG | WNOWAIT); } while (r < 0 && errno == EINTR);
    if (r < 0) return -1;
    if (info.si_pid != pid) return 0;
    *status = info.si_code == CLD_EXITED ? (info.si_status & 0xff) << 8 : (info.si_status & 0x7f);
    return 1;
}

/* The write end of the signal pipe, or -1. The handler reads it once; it is
   set before any handler is installed and cleared only after every one is
   removed, so a handler never sees a closed descriptor. */
static volatile sig_atomic_t signal_pipe_write = -1;
/* The calling thread's signal mask before the pipe was opened. */
static sigset_t signal_pipe_saved_mask;

static void signal_pipe_handler(int sig) {
    int saved = errno;
    unsigned char byte = (unsigned char)sig;
    int fd = signal_pipe_write;
    /* A full pipe drops the byte: the reader has not yet taken the earlier
       ones, and one byte per signal number is all it needs. */
    if (fd >= 0) (void)write(fd, &byte, 1);
    errno = saved;
}

int cloop_signal_pipe_open(const int *signals, int count) {
    if (signal_pipe_write >= 0) {
        errno = EBUSY;
        return -1;
    }
    int fds[2];
    if (pipe2(fds, O_CLOEXEC | O_NONBLOCK) != 0) return -1;
    signal_pipe_write = fds[1];
    struct sigaction action;
    memset(&action, 0, sizeof action);
    action.sa_handler = signal_pipe_handler;
    sigemptyset(&action.sa_mask);
    action.sa_flags = SA_RESTART;
    sigset_t routed;
    sigemptyset(&routed);
    for (int i = 0; i < count; i++) {
        if (sigaddset(&routed, signals[i]) != 0 || sigaction(signals[i], &action, NULL) != 0) {
            int failure = errno;
            for (int j = 0; j < i; j++) signal(signals[j], SIG_DFL);
            signal_pipe_write = -1;
            close(fds[0]);
            close(fds[1]);
            errno = failure;
            return -1;
        }
    }
    /* A mask inherited from whoever started the process (a test runner's
       thread, say) may block them; a blocked signal would wait, pending,
       for ever. One already pending is handled now. */
    pthread_sigmask(SIG_UNBLOCK, &routed, &signal_pipe_saved_mask);
    return fds[0];
}

void cloop_signal_pipe_close(int read_fd, const int *signals, int count) {
    /* The mask first: a signal that comes now waits instead of finding
       its default action half restored. */
    pthread_sigmask(SIG_SETMASK, &signal_pipe_saved_mask, NULL);
    for (int i = 0; i < count; i++) signal(signals[i], SIG_DFL);
    int write_fd = signal_pipe_write;
    signal_pipe_write = -1;
    if (write_fd >= 0) close(write_fd);
    close(read_fd);
}
