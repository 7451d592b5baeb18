/* klabd.c: the daemon: fires schedules, runs queued jobs as child processes, resumes interrupted ones. */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "buf.h"
#include "conf.h"
#include "db.h"
#include "job.h"
#include "lease.h"
#include "lock.h"
#include "log.h"
#include "sched.h"
#include "util.h"

static volatile sig_atomic_t got_term, got_hup, job_stop;

static void on_term(int sig) { (void)sig; got_term = 1; }
static void on_hup(int sig) { (void)sig; got_hup = 1; }
static void on_job_term(int sig) { (void)sig; job_stop = 1; }

struct child {
	pid_t pid;
	int64_t job;
	int64_t started_ms;
};

struct daemon {
	const char *config_path;
	char *db_path;
	struct klab_config *cfg;
	struct db *db;
	int lock_fd;
	long grace_s;
	int max_jobs;		/* -j: overrides [lab] max_jobs */
	struct child *kids;
	size_t n_kids;
	struct { int64_t job; int deaths; } *crashes;
	size_t n_crashes;
};

static int usage(int status)
{
	fprintf(status ? stderr : stdout,
		"usage: klabd [-d] [-c CONFIG] [-n] [-D DB] [-g SECONDS] [-j N]\n"
		"  -d          stay in the foreground, log to stderr (else syslog)\n"
		"  -c CONFIG   configuration file (default: $KLAB_CONFIG, ./klab.conf, ...)\n"
		"  -n          check the configuration and exit\n"
		"  -D DB       database file (default: $KLAB_DB, else [lab] db)\n"
		"  -g SECONDS  on SIGTERM, how long running steps may take to finish (default 60)\n"
		"  -j N        jobs at once (default: [lab] max_jobs, else one per machine pair)\n"
		"Signals: SIGHUP reloads the configuration (a bad one is refused and the old kept);\n"
		"SIGTERM stops starting jobs, lets running steps finish, then exits.\n");
	return status;
}

static int load_config(const char *path, struct klab_config **out)
{
	struct klab_config *cfg = xcalloc(1, sizeof(*cfg));

	if (conf_load(cfg, path)) {
		free(cfg);
		return -1;
	}
	*out = cfg;
	return 0;
}

static void free_config(struct klab_config *cfg)
{
	if (cfg) {
		conf_free(cfg);
		free(cfg);
	}
}

/* Single instance per database: flock on DB.lock, our pid written in it. */
static int take_lock(struct daemon *d)
{
	char *p = xasprintf("%s.lock", d->db_path);
	char pid[32] = "";
	int fd = lock_file(p, 0);

	if (fd == LOCK_FILE_BUSY) {
		struct buf b = BUF_INIT;

		if (buf_read_file(&b, p) == 0)
			snprintf(pid, sizeof(pid), "%.*s", (int)strcspn(b.buf, "\n"), b.buf);
		buf_release(&b);
		error("another klabd is running on database '%s'%s%s (lock '%s')", d->db_path,
		      *pid ? " as pid " : "", pid, p);
	}
	if (fd < 0) {
		free(p);
		return -1;
	}
	if (ftruncate(fd, 0) == 0) {
		snprintf(pid, sizeof(pid), "%d\n", (int)getpid());
		if (pwrite(fd, pid, strlen(pid), 0) < 0)
			warn("cannot write the pid into '%s'", p);
	}
	free(p);
	d->lock_fd = fd;
	return 0;
}

static int pairs_in_config(const struct klab_config *cfg)
{
	int n = 0;

	for (size_t i = 0; i < cfg->n_machines; i++)
		if (cfg->machines[i].role == ROLE_DUT && cfg->machines[i].peer)
			n++;
	return n ? n : 1;
}

static int job_limit(struct daemon *d)
{
	if (d->max_jobs > 0)
		return d->max_jobs;
	if (d->cfg->lab.max_jobs > 0)
		return d->cfg->lab.max_jobs;
	return pairs_in_config(d->cfg);
}

static struct child *find_kid(struct daemon *d, int64_t job)
{
	for (size_t i = 0; i < d->n_kids; i++)
		if (d->kids[i].job == job)
			return &d->kids[i];
	return NULL;
}

static int *crash_count(struct daemon *d, int64_t job)
{
	for (size_t i = 0; i < d->n_crashes; i++)
		if (d->crashes[i].job == job)
			return &d->crashes[i].deaths;
	d->crashes = xrealloc(d->crashes, (d->n_crashes + 1) * sizeof(*d->crashes));
	d->crashes[d->n_crashes].job = job;
	d->crashes[d->n_crashes].deaths = 0;
	return &d->crashes[d->n_crashes++].deaths;
}

/* Start job ID in a child process. */
static int start_job(struct daemon *d, int64_t id, const char *why)
{
	pid_t pid;

	fflush(NULL);
	pid = fork();
	if (pid < 0)
		return error_errno("cannot fork for job %lld", (long long)id);
	if (pid == 0) {
		struct job_run_opts o = JOB_RUN_OPTS_INIT;
		struct sigaction sa;
		struct db *db;
		int rc;

		/* The daemon's lock and database handle stay the daemon's. */
		close(d->lock_fd);
		memset(&sa, 0, sizeof(sa));
		sa.sa_handler = on_job_term;
		sigemptyset(&sa.sa_mask);
		sigaction(SIGTERM, &sa, NULL);
		signal(SIGINT, SIG_IGN);
		signal(SIGHUP, SIG_IGN);
		if (db_open(d->db_path, &db))
			_exit(3);
		o.progress = 0;
		o.wait_lease = 1;
		o.stop = &job_stop;
		rc = job_run(d->cfg, db, d->db_path, id, &o);
		db_close(db);
		_exit(rc < 0 ? 3 : rc);
	}
	d->kids = xrealloc(d->kids, (d->n_kids + 1) * sizeof(*d->kids));
	d->kids[d->n_kids].pid = pid;
	d->kids[d->n_kids].job = id;
	d->kids[d->n_kids].started_ms = now_ms();
	d->n_kids++;
	log_msg(LOG_NOTICE, "%s job %lld (pid %d)", why, (long long)id, (int)pid);
	return 0;
}

static void reap(struct daemon *d)
{
	for (;;) {
		int st;
		pid_t pid = waitpid(-1, &st, WNOHANG);
		char *state = NULL;
		size_t i;

		if (pid <= 0)
			return;
		for (i = 0; i < d->n_kids && d->kids[i].pid != pid; i++)
			;
		if (i == d->n_kids)
			continue;
		int64_t job = d->kids[i].job, ran_ms = now_ms() - d->kids[i].started_ms;
		d->kids[i] = d->kids[--d->n_kids];
		db_get_str(d->db, &state, "SELECT state FROM jobs WHERE id = ?", "i", job);
		if (WIFSIGNALED(st)) {
			int *n = crash_count(d, job);
			(*n)++;
			log_msg(LOG_WARNING, "job %lld: its process %d was killed by signal %d (state %s)",
				(long long)job, (int)pid, WTERMSIG(st), state ? state : "?");
			if (*n >= 3 && state && !strcmp(state, "running")) {
				char *msg = xasprintf("the job process died %d times (last: signal %d); giving up",
						      *n, WTERMSIG(st));
				db_run(d->db, "UPDATE jobs SET state = 'failed', error = ?, finished = ?, pid = NULL "
				       "WHERE id = ?", "sdi", msg, now_wall(), job);
				lease_release(d->db, job);
				log_msg(LOG_ERR, "job %lld failed: %s", (long long)job, msg);
				free(msg);
			}
		} else {
			log_msg(LOG_NOTICE, "job %lld ended: %s (exit %d, %.0f s)", (long long)job,
				state ? state : "?", WIFEXITED(st) ? WEXITSTATUS(st) : -1, ran_ms / 1000.0);
		}
		free(state);
	}
}

/* Jobs run now by processes that are not our children (a klabd before us, or `klab run`). */
static int foreign_live(struct daemon *d)
{
	struct db_stmt *st = db_prepare(d->db, "SELECT id FROM jobs WHERE state = 'running'", "");
	int n = 0;

	while (st && db_step(st) == DB_ROW) {
		int64_t id = db_col_int64(st, 0);
		if (!find_kid(d, id) && job_is_live(d->db_path, id) == 1)
			n++;
	}
	db_finalize(st);
	return n;
}

/* Is a machine of job ID leased by another live job? */
static int machines_busy(struct daemon *d, int64_t id)
{
	int64_t n = 0;

	db_get_int(d->db, &n, "SELECT count(*) FROM leases l JOIN jobs j ON j.id = ? JOIN jobs o ON o.id = l.job_id "
		   "WHERE l.machine IN (j.dut, j.peer) AND l.job_id != j.id AND l.expires >= ? "
		   "AND o.state IN ('queued', 'running')", "id", id, now_wall());
	return n > 0;
}

static void start_jobs(struct daemon *d)
{
	int limit = job_limit(d), running = (int)d->n_kids + foreign_live(d);
	struct db_stmt *st;
	int64_t ids[64];
	int n = 0, resumed[64];

	if (running >= limit)
		return;
	/* Interrupted jobs first (state running, nobody runs them), then the queue. */
	st = db_prepare(d->db, "SELECT id, state FROM jobs WHERE state IN ('running', 'queued') "
			"ORDER BY state = 'queued', id LIMIT 64", "");
	while (st && db_step(st) == DB_ROW && n < 64) {
		int64_t id = db_col_int64(st, 0);
		if (find_kid(d, id) || job_is_live(d->db_path, id))
			continue;
		resumed[n] = !strcmp(db_col_text(st, 1), "running");
		ids[n++] = id;
	}
	db_finalize(st);
	for (int i = 0; i < n && running < limit; i++) {
		if (machines_busy(d, ids[i]))
			continue;
		if (start_job(d, ids[i], resumed[i] ? "resuming interrupted" : "starting") == 0)
			running++;
	}
}

static void fire_schedules(struct daemon *d)
{
	struct sched_fire *f = NULL;
	size_t n = 0;
	void *arg[2] = { d->db, d->cfg };

	if (sched_tick(d->db, d->cfg, time(NULL), 90, job_submit_schedule, arg, &f, &n))
		return;
	for (size_t i = 0; i < n; i++)
		log_msg(LOG_NOTICE, "schedule '%s' submitted job %lld ('%s')%s", f[i].schedule,
			(long long)f[i].job_id, f[i].job, f[i].missed ? " for a missed fire time" : "");
	sched_fires_free(f, n);
}

static void reload(struct daemon *d)
{
	struct klab_config *cfg;

	got_hup = 0;
	log_msg(LOG_NOTICE, "SIGHUP: reloading '%s'", d->config_path);
	if (load_config(d->config_path, &cfg)) {
		log_msg(LOG_ERR, "reload of '%s' failed (errors above); keeping the configuration loaded before",
			d->config_path);
		return;
	}
	free_config(d->cfg);
	d->cfg = cfg;
	if (lease_sync_machines(d->db, d->cfg))
		warn("cannot record the machines of the new configuration");
	log_msg(LOG_NOTICE, "configuration reloaded: %zu machines, %zu jobs, %zu schedules",
		d->cfg->n_machines, d->cfg->n_jobs, d->cfg->n_schedules);
}

static void signal_kids(struct daemon *d, int sig)
{
	for (size_t i = 0; i < d->n_kids; i++)
		kill(d->kids[i].pid, sig);
}

int main(int argc, char **argv)
{
	struct daemon d;
	const char *db_opt = NULL;
	int check = 0, foreground = 0, opt, level = -1;
	struct sigaction sa;
	int64_t stop_deadline = 0, last_tick = 0;
	long v;

	memset(&d, 0, sizeof(d));
	d.lock_fd = -1;
	d.grace_s = 60;
	log_init("klabd", 0, LOG_NOTICE);
	while ((opt = getopt(argc, argv, "dc:nD:g:j:h")) != -1) {
		switch (opt) {
		case 'd': foreground = 1; break;
		case 'c': d.config_path = optarg; break;
		case 'n': check = 1; break;
		case 'D': db_opt = optarg; break;
		case 'g':
			if (parse_long(optarg, 0, 86400, &v)) {
				error("-g must be seconds from 0 to 86400, not '%s'", optarg);
				return usage(2);
			}
			d.grace_s = v;
			break;
		case 'j':
			if (parse_long(optarg, 1, 1000, &v)) {
				error("-j must be a number from 1 to 1000, not '%s'", optarg);
				return usage(2);
			}
			d.max_jobs = (int)v;
			break;
		case 'h': return usage(0);
		default: return usage(2);
		}
	}
	if (optind < argc && !d.config_path)
		d.config_path = argv[optind++];
	if (optind < argc) {
		error("unexpected argument '%s'", argv[optind]);
		return usage(2);
	}
	if (!d.config_path)
		d.config_path = conf_default_path();
	if (!d.config_path) {
		error("no configuration file: give -c CONFIG or set KLAB_CONFIG");
		return 2;
	}
	if (load_config(d.config_path, &d.cfg))
		return 1;
	if (check) {
		printf("%s: configuration ok\n", d.config_path);
		free_config(d.cfg);
		return 0;
	}
	if (d.cfg->lab.log_level)
		level = log_level_parse(d.cfg->lab.log_level);
	log_init("klabd", !foreground, level >= 0 ? level : foreground ? LOG_INFO : LOG_NOTICE);

	if (!db_opt)
		db_opt = getenv("KLAB_DB");
	if (!db_opt)
		db_opt = d.cfg->lab.db;
	if (!db_opt) {
		error("no database: set [lab] db, KLAB_DB or -D");
		return 1;
	}
	d.db_path = xstrdup(db_opt);
	if (take_lock(&d))
		return 1;
	if (db_open(d.db_path, &d.db))
		return 1;

	memset(&sa, 0, sizeof(sa));
	sigemptyset(&sa.sa_mask);
	sa.sa_handler = on_term;
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGINT, &sa, NULL);
	sa.sa_handler = on_hup;
	sigaction(SIGHUP, &sa, NULL);
	signal(SIGPIPE, SIG_IGN);

	if (lease_sync_machines(d.db, d.cfg))
		warn("cannot record the machines in the database");
	log_msg(LOG_NOTICE, "klabd %s started (pid %d): config '%s', database '%s', up to %d job(s) at once",
		KLAB_VERSION, (int)getpid(), d.config_path, d.db_path, job_limit(&d));

	for (;;) {
		struct timespec ts = { 0, 200 * 1000 * 1000 };

		if (got_hup)
			reload(&d);
		reap(&d);
		if (got_term && !stop_deadline) {
			stop_deadline = now_ms() + d.grace_s * 1000;
			log_msg(LOG_NOTICE, "SIGTERM: no new jobs; %zu running job(s) get up to %ld s to finish "
				"their current step", d.n_kids, d.grace_s);
			signal_kids(&d, SIGTERM);
		}
		if (stop_deadline) {
			if (!d.n_kids)
				break;
			if (now_ms() > stop_deadline) {
				log_msg(LOG_WARNING, "grace period over: killing %zu job process(es); "
					"they resume at the next start", d.n_kids);
				signal_kids(&d, SIGKILL);
				while (d.n_kids) {
					reap(&d);
					nanosleep(&ts, NULL);
				}
				break;
			}
		} else if (now_ms() - last_tick >= 1000) {
			last_tick = now_ms();
			fire_schedules(&d);
			start_jobs(&d);
		}
		nanosleep(&ts, NULL);
	}
	log_msg(LOG_NOTICE, "klabd stopped");
	db_close(d.db);
	free_config(d.cfg);
	free(d.kids);
	free(d.crashes);
	free(d.db_path);
	close(d.lock_fd);
	return 0;
}
