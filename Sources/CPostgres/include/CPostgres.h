// libpq, loaded at run time: loopd links no PostgreSQL client unless its
// configuration has a [fleet] table. The types and prototypes are libpq's
// own (libpq-fe.h, from libpq-dev); each function here calls the libpq
// function of the same name after the `lpq_` prefix, through a pointer
// that lpq_load() fills from libpq.so.5.
#ifndef LOOPD_CPOSTGRES_H
#define LOOPD_CPOSTGRES_H

#include <postgresql/libpq-fe.h>

/// Loads libpq.so.5 and every function below, once (later calls return the
/// first outcome). NULL on success, else a static text saying what failed.
const char *lpq_load(void);

PGconn *lpq_PQconnectStartParams(const char *const *keywords, const char *const *values, int expand_dbname);
PostgresPollingStatusType lpq_PQconnectPoll(PGconn *conn);
ConnStatusType lpq_PQstatus(const PGconn *conn);
int lpq_PQsocket(const PGconn *conn);
int lpq_PQsetnonblocking(PGconn *conn, int arg);
void lpq_PQfinish(PGconn *conn);
char *lpq_PQerrorMessage(const PGconn *conn);
int lpq_PQserverVersion(const PGconn *conn);
int lpq_PQbackendPID(const PGconn *conn);
int lpq_PQsslInUse(PGconn *conn);
PQnoticeProcessor lpq_PQsetNoticeProcessor(PGconn *conn, PQnoticeProcessor proc, void *arg);

int lpq_PQsendQuery(PGconn *conn, const char *query);
int lpq_PQsendQueryParams(PGconn *conn, const char *command, int nParams, const Oid *paramTypes,
                          const char *const *paramValues, const int *paramLengths, const int *paramFormats,
                          int resultFormat);
int lpq_PQflush(PGconn *conn);
int lpq_PQconsumeInput(PGconn *conn);
int lpq_PQisBusy(PGconn *conn);
PGresult *lpq_PQgetResult(PGconn *conn);
PGnotify *lpq_PQnotifies(PGconn *conn);

ExecStatusType lpq_PQresultStatus(const PGresult *res);
char *lpq_PQresultErrorField(const PGresult *res, int fieldcode);
char *lpq_PQresultErrorMessage(const PGresult *res);
int lpq_PQntuples(const PGresult *res);
int lpq_PQnfields(const PGresult *res);
char *lpq_PQgetvalue(const PGresult *res, int tup_num, int field_num);
int lpq_PQgetisnull(const PGresult *res, int tup_num, int field_num);
int lpq_PQgetlength(const PGresult *res, int tup_num, int field_num);
char *lpq_PQfname(const PGresult *res, int field_num);
char *lpq_PQcmdTuples(PGresult *res);
void lpq_PQclear(PGresult *res);
void lpq_PQfreemem(void *ptr);

PQconninfoOption *lpq_PQconninfoParse(const char *conninfo, char **errmsg);
void lpq_PQconninfoFree(PQconninfoOption *connOptions);
int lpq_PQlibVersion(void);

#endif
