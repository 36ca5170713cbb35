#include "CThreadCredentials.h"

#include <errno.h>
#include <pthread.h>
#include <linux/capability.h>
#include <sys/socket.h>
#include <sys/xattr.h>
#include <sys/syscall.h>
#include <unistd.h>

int cthreadcred_set_effective_ids(unsigned int uid, unsigned int gid) {
    // Root again first, so that the gid may change (-1: leave as it is).
    if (syscall(SYS_setresuid, -1, 0, -1) != 0) return -1;
    if (syscall(SYS_setresgid, -1, gid, -1) != 0) return -1;
    return syscall(SYS_setresuid, -1, uid, -1) == 0 ? 0 : -1;
}

/// One listen(2) to make on a thread of its own, and how it went.
struct listen_call {
    int fd, backlog;
    unsigned int uid, gid;
    int result, error;
};

static void *listen_as(void *argument) {
    struct listen_call *call = argument;
    // The thread ends right after: its credentials need no restoring.
    if (cthreadcred_set_effective_ids(call->uid, call->gid) != 0 || listen(call->fd, call->backlog) != 0) {
        call->result = -1;
        call->error = errno;
    }
    return NULL;
}

int cthreadcred_listen_as(int fd, int backlog, unsigned int uid, unsigned int gid) {
    struct listen_call call = { fd, backlog, uid, gid, 0, 0 };
    pthread_t thread;
    int failed = pthread_create(&thread, NULL, listen_as, &call);
    if (failed != 0) {
        errno = failed;
        return -1;
    }
    pthread_join(thread, NULL);
    if (call.result != 0) errno = call.error;
    return call.result;
}

int cthreadcred_clear_groups(void) {
    return syscall(SYS_setgroups, 0, (void *)0) == 0 ? 0 : -1;
}

int cthreadcred_set_file_capabilities(const char *path, unsigned int permitted) {
    struct vfs_cap_data data = { .magic_etc = VFS_CAP_REVISION_2 };
    data.data[0].permitted = permitted;
    return setxattr(path, "security.capability", &data, XATTR_CAPS_SZ_2, 0);
}
