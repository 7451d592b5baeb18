/*
 * watch.h: klabd's patchwork watcher (docs/patchwork.md). Each poll of a
 * [patchwork "NAME"] section reads the project's series-completed events
 * since the stored cursor, takes each new series through intake in the
 * sandbox, filters it (path globs, delegate, states), queues one job per
 * series from the job template (a new version cancels the older one's
 * job), follows the jobs, and posts checks on every patch: pending when
 * queued, the outcome when the job ended. A check is written to the
 * database before it is posted and looked for on the server before a post
 * is repeated, so a klabd killed at any moment posts each (patch, context,
 * state) at most once.
 */
#ifndef KLAB_WATCH_H
#define KLAB_WATCH_H

#include "conf/conf.h"
#include "store/db.h"

/* What one poll did. */
struct watch_stats {
	int events;		/* series-completed events read */
	int malformed;		/* of them, documents that were no use (logged, naming the field) */
	int seen;		/* new series */
	int filtered, queued, superseded, failed;
	int running, ended;	/* jobs seen to start, to end */
	int posted, found;	/* checks posted now; found on the server after an interrupted post */
	int requests, retries;	/* HTTP requests made, of them retries */
	int transient;		/* 1: the server did not answer after the retries (the next poll goes on) */
};

/*
 * One poll of watcher W on DB, with the config CFG (the job template, the
 * sandbox, work_dir for the mbox files). Bounded: at most 100 events, 16
 * new series, and the checks then due; every request has W's timeout and
 * at most 5 attempts. 0, or -1 when the poll could not start (the token
 * file, the database: logged). A server that stopped answering is not an
 * error: what was not done is done at the next poll (ST->transient).
 */
int watch_poll(struct db *db, const struct klab_config *cfg, const struct conf_patchwork *w,
	       struct watch_stats *st);

/*
 * 1 when a path of a patch matches GLOB: '*' any characters but '/', a
 * double star any characters including '/' (so net/ and a double star
 * match every file under net/), '?' one character but '/'. 0 otherwise.
 */
int watch_glob_match(const char *glob, const char *path);

/* Seconds since the epoch of patchwork's ISO 8601 date text (UTC, no zone, fractions allowed); -1 if malformed. */
double watch_parse_date(const char *s);

#endif
