#ifndef CLOOPSHIMS_H
#define CLOOPSHIMS_H

#include <stdint.h>
#include <sys/types.h>
#include <sys/epoll.h>
#include <signal.h>
#include <sys/eventfd.h>
#include <sys/timerfd.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <sched.h>

/// Kernel calls Swift cannot reach directly: glibc's `syscall` is variadic,
/// `struct epoll_event` is packed on x86_64, and some calls are declared
/// only under `_GNU_SOURCE`.

/// pidfd_open(2); returns -1 with errno set on failure.
int cloop_pidfd_open(pid_t pid, unsigned int flags);
/// pidfd_send_signal(2); returns -1 with errno set on failure.
int cloop_pidfd_send_signal(int pidfd, int sig);
/// Names the calling thread (cut to the kernel limit of 15 bytes).
void cloop_set_thread_name(const char *name);
/// accept4(2) without an address.
int cloop_accept4(int fd, int flags);
/// SO_PEERCRED of a connected Unix socket; -1 with errno on failure.
int cloop_peercred(int fd, int *pid, unsigned int *uid, unsigned int *gid);
/// recvfrom(2) that also reports the sender's uid when the socket has
/// SO_PASSCRED set (`*has_uid` 1, else 0). Returns what recvmsg returns.
ssize_t cloop_recv_with_uid(int fd, void *buf, size_t len, int flags,
                            struct sockaddr_un *from, socklen_t *from_len,
                            unsigned int *uid, int *has_uid);
/// posix_spawn with stdin from /dev/null, stdout/stderr onto the given
/// descriptors, every other descriptor closed, signals unblocked and at
/// their defaults, and the working directory set. Returns 0 or an errno.
int cloop_spawn(const char *path, char *const argv[], char *const envp[], const char *cwd,
                int stdout_fd, int stderr_fd, pid_t *pid);
/// A CLOEXEC pipe whose read end (fds[0]) is non-blocking.
int cloop_pipe(int fds[2]);
/// malloc_trim(3) (`malloc.h` is not in Swift's Glibc module); 1 if memory was released.
int cloop_malloc_trim(size_t pad);
/// malloc_usable_size(3): the bytes the allocation at `pointer` can hold.
size_t cloop_malloc_usable_size(void *pointer);
/// gettid(2).
pid_t cloop_gettid(void);
/// sched_getaffinity(2) of thread `tid` (0: the caller) into `set`; -1
/// with errno on failure. glibc declares it only under _GNU_SOURCE.
int cloop_sched_getaffinity(pid_t tid, cpu_set_t *set);
/// sched_setaffinity(2) of thread `tid` (0: the caller); -1 with errno.
int cloop_sched_setaffinity(pid_t tid, const cpu_set_t *set);
/// The CPU's spin-wait hint (x86 `pause`, Arm `yield`): one iteration of a
/// busy-wait that is kinder to a sibling hyperthread and to power.
static inline void cloop_cpu_relax(void) {
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#elif defined(__aarch64__)
    __asm__ __volatile__("yield");
#endif
}

/// One readiness event, unpacked.
typedef struct {
    uint32_t events;
    uint64_t token;
} cloop_event;

int cloop_epoll_ctl(int epfd, int op, int fd, uint32_t events, uint64_t token);
/// epoll_wait(2) into an unpacked array. `timeout_ms` as for epoll_wait.
int cloop_epoll_wait(int epfd, cloop_event *events, int max, int timeout_ms);

/// Signal-set helpers (the sigset macros are not importable).
void cloop_sigset_empty(sigset_t *set);
void cloop_sigset_add(sigset_t *set, int sig);

/// libdispatch's hooks for a run loop serving the main queue (what
/// CoreFoundation uses). On Linux the handle is an eventfd.
int _dispatch_get_main_queue_handle_4CF(void);
void _dispatch_main_queue_callback_4CF(void *msg);

#endif
