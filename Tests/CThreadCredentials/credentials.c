#include "CThreadCredentials.h"

#include <sys/syscall.h>
#include <unistd.h>

int cthreadcred_set_effective_ids(unsigned int uid, unsigned int gid) {
    // Root again first, so that the gid may change (-1: leave as it is).
    if (syscall(SYS_setresuid, -1, 0, -1) != 0) return -1;
    if (syscall(SYS_setresgid, -1, gid, -1) != 0) return -1;
    return syscall(SYS_setresuid, -1, uid, -1) == 0 ? 0 : -1;
}

int cthreadcred_clear_groups(void) {
    return syscall(SYS_setgroups, 0, (void *)0) == 0 ? 0 : -1;
}
