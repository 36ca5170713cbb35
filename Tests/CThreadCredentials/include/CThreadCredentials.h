#ifndef CTHREADCREDENTIALS_H
#define CTHREADCREDENTIALS_H

/// Sets the effective uid and gid of the calling thread only, for tests that
/// connect to loopd as another user from a thread of their own. Linux keeps
/// credentials per thread; glibc's setresuid(2) and setresgid(2) change every
/// thread of the process, the system calls themselves only the caller. Needs
/// a real uid of 0. Returns 0, or -1 with errno set.
int cthreadcred_set_effective_ids(unsigned int uid, unsigned int gid);

/// Calls listen(2) on the bound socket `fd` from a new thread that runs as
/// `uid` and `gid`, and waits for that thread to end. The kernel records the
/// listener's credentials at listen(2) (a connected client reads them with
/// SO_PEERCRED), so the socket then reports `uid` to every client, while the
/// rest of the process keeps its own. Needs a real uid of 0. Returns 0, or -1
/// with errno set.
int cthreadcred_listen_as(int fd, int backlog, unsigned int uid, unsigned int gid);

/// Empties the calling thread's supplementary groups, so that a connection
/// it makes next carries none (SO_PEERGROUPS), as a user's own process
/// started with no groups would. The system call, not glibc's setgroups(3),
/// which changes every thread. Call it before dropping the effective uid.
/// Returns 0, or -1 with errno set.
int cthreadcred_clear_groups(void);

/// Gives the program at `path` the file capabilities `permitted` (a mask of
/// capability numbers below 32; none effective or inheritable), as
/// setcap(8) would: a process executing it may gain them. Needs root and a
/// filesystem that keeps `security.*` attributes. Returns 0, or -1 with
/// errno set.
int cthreadcred_set_file_capabilities(const char *path, unsigned int permitted);

#endif
