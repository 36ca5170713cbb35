#ifndef CSYSTEMD_SHIM_H
#define CSYSTEMD_SHIM_H
/* libsystemd's non-variadic entry points: sd_notify, sd_journal_sendv,
   sd_listen_fds_with_names, sd_watchdog_enabled. */
#include <systemd/sd-daemon.h>
#include <systemd/sd-journal.h>
#include <sys/uio.h>
#endif
