#include "CPostgres.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>

// Each entry: return type, name, parameter list, argument list. One list
// makes the pointer table, the loading and the forwarding functions, so
// they cannot disagree.
#define LPQ_FUNCTIONS(X) \
    X(PGconn *, PQconnectStartParams, (const char *const *k, const char *const *v, int e), (k, v, e)) \
    X(PostgresPollingStatusType, PQconnectPoll, (PGconn *c), (c)) \
    X(ConnStatusType, PQstatus, (const PGconn *c), (c)) \
    X(int, PQsocket, (const PGconn *c), (c)) \
    X(int, PQsetnonblocking, (PGconn *c, int a), (c, a)) \
    X(void, PQfinish, (PGconn *c), (c)) \
    X(char *, PQerrorMessage, (const PGconn *c), (c)) \
    X(int, PQserverVersion, (const PGconn *c), (c)) \
    X(int, PQbackendPID, (const PGconn *c), (c)) \
    X(int, PQsslInUse, (PGconn *c), (c)) \
    X(PQnoticeProcessor, PQsetNoticeProcessor, (PGconn *c, PQnoticeProcessor p, void *a), (c, p, a)) \
    X(int, PQsendQuery, (PGconn *c, const char *q), (c, q)) \
    X(int, PQsendQueryParams, (PGconn *c, const char *q, int n, const Oid *t, const char *const *v, const int *l, \
                               const int *f, int r), (c, q, n, t, v, l, f, r)) \
    X(int, PQflush, (PGconn *c), (c)) \
    X(int, PQconsumeInput, (PGconn *c), (c)) \
    X(int, PQisBusy, (PGconn *c), (c)) \
    X(PGresult *, PQgetResult, (PGconn *c), (c)) \
    X(PGnotify *, PQnotifies, (PGconn *c), (c)) \
    X(ExecStatusType, PQresultStatus, (const PGresult *r), (r)) \
    X(char *, PQresultErrorField, (const PGresult *r, int f), (r, f)) \
    X(char *, PQresultErrorMessage, (const PGresult *r), (r)) \
    X(int, PQntuples, (const PGresult *r), (r)) \
    X(int, PQnfields, (const PGresult *r), (r)) \
    X(char *, PQgetvalue, (const PGresult *r, int t, int f), (r, t, f)) \
    X(int, PQgetisnull, (const PGresult *r, int t, int f), (r, t, f)) \
    X(int, PQgetlength, (const PGresult *r, int t, int f), (r, t, f)) \
    X(char *, PQfname, (const PGresult *r, int f), (r, f)) \
    X(char *, PQcmdTuples, (PGresult *r), (r)) \
    X(void, PQclear, (PGresult *r), (r)) \
    X(void, PQfreemem, (void *p), (p)) \
    X(PQconninfoOption *, PQconninfoParse, (const char *s, char **e), (s, e)) \
    X(void, PQconninfoFree, (PQconninfoOption *o), (o)) \
    X(int, PQlibVersion, (void), ())

#define LPQ_POINTER(ret, name, params, args) static ret(*p_##name) params;
LPQ_FUNCTIONS(LPQ_POINTER)

#define LPQ_FORWARD(ret, name, params, args) \
    ret lpq_##name params { return p_##name args; }
LPQ_FUNCTIONS(LPQ_FORWARD)

static pthread_once_t once = PTHREAD_ONCE_INIT;
static const char *failure;
static char failure_text[512];

static void load(void) {
    // The soname, not libpq.so: that link comes only with libpq-dev.
    void *library = dlopen("libpq.so.5", RTLD_NOW | RTLD_LOCAL);
    if (library == NULL) {
        snprintf(failure_text, sizeof failure_text, "cannot load libpq.so.5 (Debian: apt install libpq5): %s", dlerror());
        failure = failure_text;
        return;
    }
#define LPQ_LOAD(ret, name, params, args) \
    p_##name = (ret(*) params)dlsym(library, #name); \
    if (p_##name == NULL) { \
        snprintf(failure_text, sizeof failure_text, "libpq.so.5 has no %s", #name); \
        failure = failure_text; \
        return; \
    }
    LPQ_FUNCTIONS(LPQ_LOAD)
}

const char *lpq_load(void) {
    pthread_once(&once, load);
    return failure;
}
