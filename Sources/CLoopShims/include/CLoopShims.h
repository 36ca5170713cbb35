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
#include <sys/resource.h>

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

/// One resource limit for a contained child (setrlimit(2)'s `resource`).
typedef struct {
    int resource;
    uint64_t soft;
    uint64_t hard;
} cloop_rlimit;

/// What `cloop_spawn_contained` sets up in the child, in this order, before
/// it executes `path`: every signal at its default; a session and process
/// group of its own; the cgroup (`cgroup_procs_fd`, an open cgroup.procs,
/// or -1); the groups, gid and uid (when `set_ids`), with ambient
/// capabilities cleared; no new privileges; the parent-death signal
/// (SIGKILL) and a check that the parent still lives; a Landlock domain
/// with the `landlock_scope` bits (0: none); the working directory; stdin
/// from /dev/null, stdout and stderr onto the given descriptors and every
/// other descriptor closed; the resource limits; an empty signal mask.
typedef struct {
    const char *path;
    char *const *argv;
    char *const *envp;
    const char *cwd;
    int stdout_fd;
    int stderr_fd;
    int cgroup_procs_fd;
    const cloop_rlimit *limits;
    int limit_count;
    int set_ids;
    uid_t uid;
    gid_t gid;
    const gid_t *groups;
    int group_count;
    uint64_t landlock_scope;
} cloop_contained_spec;

/// The steps of `cloop_spawn_contained`, for its `failed_step`.
enum {
    CLOOP_STEP_NONE = 0,
    CLOOP_STEP_STACK,
    CLOOP_STEP_CLONE,
    CLOOP_STEP_SETSID,
    CLOOP_STEP_CGROUP,
    CLOOP_STEP_RLIMIT,
    CLOOP_STEP_SETGROUPS,
    CLOOP_STEP_SETGID,
    CLOOP_STEP_SETUID,
    CLOOP_STEP_CAPABILITIES,
    CLOOP_STEP_NO_NEW_PRIVS,
    CLOOP_STEP_PDEATHSIG,
    CLOOP_STEP_LANDLOCK,
    CLOOP_STEP_CHDIR,
    CLOOP_STEP_STDIO,
    CLOOP_STEP_CLOSE,
    CLOOP_STEP_EXEC,
};

/// Starts a contained child as `spec` says (see `cloop_contained_spec`),
/// with clone(2) sharing the caller's memory until the child executes (as
/// posix_spawn does), so a large daemon copies no page tables; the caller
/// stays as dumpable as it was. Returns 0 and the child's pid, or an errno
/// and the step that failed (the child, if it started, has been reaped).
int cloop_spawn_contained(const cloop_contained_spec *spec, pid_t *pid, int *failed_step);

/// Sets the process dumpable (PR_SET_DUMPABLE) if it is not: 1 if it was
/// not and now is, 0 if it was already, -1 with errno. (prctl is variadic.)
int cloop_restore_dumpable(void);
/// The Landlock ABI version this kernel offers (0: none, or disabled).
int cloop_landlock_abi(void);
/// Landlock scope bits (ABI 6): abstract Unix sockets and signals of
/// processes outside the domain are out of reach.
enum {
    CLOOP_LANDLOCK_SCOPE_ABSTRACT_UNIX_SOCKET = 1,
    CLOOP_LANDLOCK_SCOPE_SIGNAL = 2,
};

/// Whether child `pid` has ended, without reaping it (waitid(2) with
/// WNOWAIT): 1 and a wait(2)-style `status` if it has, 0 if it still runs,
/// -1 with errno. The zombie keeps its pid, and so its process group's id,
/// from being reused until it is reaped.
int cloop_ended_without_reaping(pid_t pid, int *status);
/// wait4(2) with WNOHANG for `pid`: 1 and its status and usage if it has
/// ended (and is now reaped), 0 if it still runs, -1 with errno.
int cloop_reap_with_usage(pid_t pid, int *status, struct rusage *usage);
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

/// The self-pipe of signals (`SignalPipe`): opens a pipe, both ends
/// close-on-exec and non-blocking, and makes each of the `count` `signals`
/// write its number as one byte to it, from whichever thread it hits
/// (sigaction with SA_RESTART; the handler calls only write(2) and keeps
/// errno), and unblocks them in the calling thread. Returns the read end,
/// or -1 with errno (then no handler or mask is changed). One pipe per
/// process at a time: a second open fails with EBUSY.
int cloop_signal_pipe_open(const int *signals, int count);
/// Gives the calling thread back the signal mask it had before
/// `cloop_signal_pipe_open`, puts each of `signals` back to its default
/// action, then closes the pipe whose read end is `read_fd`. The handlers
/// go before the pipe, so none can write to a descriptor number the
/// process has reused.
void cloop_signal_pipe_close(int read_fd, const int *signals, int count);

/// Signal-set helpers (the sigset macros are not importable).
void cloop_sigset_empty(sigset_t *set);
void cloop_sigset_add(sigset_t *set, int sig);

/// libdispatch's hooks for a run loop serving the main queue (what
/// CoreFoundation uses). On Linux the handle is an eventfd.
int _dispatch_get_main_queue_handle_4CF(void);
void _dispatch_main_queue_callback_4CF(void *msg);

#endif
