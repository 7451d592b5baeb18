/* prepare.c: `klab-agent prepare` and `restore`: apply a tuning profile, put back exactly what it changed. */
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "agent.h"
#include "jsonh.h"
#include "log.h"
#include "parse.h"
#include "run.h"
#include "strvec.h"
#include "util.h"

/*
 * The order of work, and why:
 *  1. check every knob the profile names exists, before touching anything;
 *  2. read every value that may change (all XPS/RPS masks of the NIC, not
 *     only of the queues that will exist after a channel change) and save
 *     them to STATE/prepare.json with an atomic write;
 *  3. apply: channels first (they decide which queues exist), then XPS, RPS,
 *     IRQ affinity, governor, sysctls; any failure rolls back all of it.
 * restore sets the channels back first, so that the queues exist again,
 * then writes every saved value in reverse order.
 */

struct knob {
	char *path;
	char *old;
	char *new;		/* NULL: saved only, not changed by this profile */
	char *got;		/* read back after the write (what `prepare --check` expects) */
};

struct plan {
	const char *nic;
	long channels;		/* 0: leave */
	struct channels ch_old;
	int ch_combined;	/* the NIC has combined channels (else rx/tx) */
	struct knob *k;
	size_t n;
	const char *qdisc;	/* tc qdisc arguments for the root of nic, or NULL */
};

static void plan_free(struct plan *p)
{
	size_t i;

	for (i = 0; i < p->n; i++) {
		free(p->k[i].path);
		free(p->k[i].old);
		free(p->k[i].new);
		free(p->k[i].got);
	}
	free(p->k);
	p->k = NULL;
	p->n = 0;
}

static struct knob *plan_find(struct plan *p, const char *path)
{
	size_t i;

	for (i = 0; i < p->n; i++)
		if (!strcmp(p->k[i].path, path))
			return &p->k[i];
	return NULL;
}

/* Add a knob whose file must exist; its current value is read now. Quiet: no message. */
static int plan_add_opt(struct plan *p, const char *what, const char *path, const char *new, int quiet)
{
	struct buf b = BUF_INIT;
	struct knob *k = plan_find(p, path);

	if (k) {
		if (new) {
			free(k->new);
			k->new = xstrdup(new);
		}
		return 0;
	}
	if (read_small_file(path, &b)) {
		int e = errno;
		buf_release(&b);
		if (quiet)
			return -1;
		if (e == ENOENT)
			return error("cannot prepare: %s does not exist (no '%s')", what, path);
		return error("cannot prepare: cannot read %s at '%s': %s", what, path, strerror(e));
	}
	p->k = xrealloc(p->k, (p->n + 1) * sizeof(*p->k));
	p->k[p->n].path = xstrdup(path);
	p->k[p->n].old = buf_detach(&b, NULL);
	p->k[p->n].new = new ? xstrdup(new) : NULL;
	p->k[p->n].got = NULL;
	p->n++;
	return 0;
}

static int plan_add(struct plan *p, const char *what, const char *path, const char *new)
{
	return plan_add_opt(p, what, path, new, 0);
}

static int write_knob(const char *path, const char *value)
{
	int fd = open(path, O_WRONLY | O_CLOEXEC);
	int ret = 0;

	if (fd < 0)
		return error_errno("cannot open '%s' for writing", path);
	if (write_all(fd, value, strlen(value)))
		ret = error_errno("cannot write '%s' to '%s'", value, path);
	if (close(fd) && !ret)
		ret = error_errno("cannot write '%s' to '%s'", value, path);
	return ret;
}

static int queue_count(const char *nic, const char *prefix)
{
	char *dir = xasprintf("/sys/class/net/%s/queues", nic);
	DIR *d = opendir(dir);
	struct dirent *e;
	int n = 0;

	free(dir);
	if (!d)
		return 0;
	while ((e = readdir(d)))
		if (starts_with(e->d_name, prefix))
			n++;
	closedir(d);
	return n;
}

static int ethtool_channels(const char *nic, struct channels *ch)
{
	const char *argv[] = { "ethtool", "-l", nic, NULL };
	struct run_cmd c = RUN_CMD_INIT;
	int ret = -1;

	c.argv = argv;
	c.timeout_ms = 10000;
	if (run_command(&c))
		goto out;
	if (c.status) {
		buf_rtrim(&c.err);
		error("cannot prepare: 'ethtool -l %s' failed: %s", nic, c.err.buf);
		goto out;
	}
	ret = parse_ethtool_channels(c.out.buf, c.out.len, "ethtool -l output", ch);
out:
	run_release(&c);
	return ret;
}

static int ethtool_set_channels(const char *nic, int combined, long rx, long tx)
{
	struct strvec argv = STRVEC_INIT;
	struct run_cmd c = RUN_CMD_INIT;
	int ret = -1;

	strvec_push(&argv, "ethtool");
	strvec_push(&argv, "-L");
	strvec_push(&argv, nic);
	if (combined) {
		strvec_push(&argv, "combined");
		strvec_pushf(&argv, "%ld", rx);
	} else {
		strvec_push(&argv, "rx");
		strvec_pushf(&argv, "%ld", rx);
		strvec_push(&argv, "tx");
		strvec_pushf(&argv, "%ld", tx);
	}
	c.argv = (const char *const *)argv.v;
	c.timeout_ms = 30000;
	if (run_command(&c))
		goto out;
	if (c.status) {
		buf_rtrim(&c.err);
		error("'ethtool -L %s' failed: %s", nic, c.err.buf);
		goto out;
	}
	ret = 0;
out:
	run_release(&c);
	strvec_clear(&argv);
	return ret;
}

static int valid_mask(const char *s)
{
	if (!*s)
		return 0;
	for (; *s; s++)
		if (!isxdigit((unsigned char)*s))
			return 0;
	return 1;
}

/* The XPS mask of tx queue i under the profile's "xps" value. */
static char *xps_mask(const char *xps, int i, long ncpu)
{
	struct strvec masks = STRVEC_INIT;
	char *ret;

	if (!strcmp(xps, "off"))
		return xstrdup("0");
	if (!strcmp(xps, "auto")) {
		long cpu = i % ncpu;
		/* hex mask with the bit of `cpu`, comma-grouped by 32 bits as the kernel prints */
		struct buf b = BUF_INIT;
		long g, groups = cpu / 32 + 1;
		for (g = groups - 1; g >= 0; g--)
			buf_addf(&b, g == groups - 1 ? "%x" : ",%08x", g == cpu / 32 ? 1u << (cpu % 32) : 0u);
		return buf_detach(&b, NULL);
	}
	strvec_split(&masks, xps, ",");
	ret = xstrdup(masks.v[i % masks.n]);
	strvec_clear(&masks);
	return ret;
}

static int state_path_exists(char **path)
{
	*path = xasprintf("%s/prepare.json", agent_state_dir());
	return file_exists(*path);
}

/*
 * A root qdisc (a known slowdown for an A/B check, or shaping): `tc qdisc
 * replace dev NIC root ARGS`; restore deletes it, which gives the device its
 * default qdisc back. So that restore is exact, a device whose root qdisc was
 * set by someone else (a handle other than 0:) is refused.
 */
static int tc_run(const char *const *argv, struct buf *out)
{
	struct run_cmd c = RUN_CMD_INIT;
	int ret = 0;

	c.argv = argv;
	c.timeout_ms = 10000;
	if (run_command(&c))
		return -1;
	if (c.status) {
		buf_rtrim(&c.err);
		ret = error("'%s %s %s %s' failed: %s", argv[0], argv[1], argv[2], argv[3],
			    c.err.len ? c.err.buf : run_describe(&c));
	} else if (out) {
		buf_addstr(out, c.out.buf);
	}
	run_release(&c);
	return ret;
}

static int qdisc_is_default(const char *nic)
{
	const char *argv[] = { "tc", "qdisc", "show", "dev", nic, "root", NULL };
	struct buf out = BUF_INIT;
	int ret;

	if (tc_run(argv, &out))
		return -1;
	ret = strstr(out.buf, " 0: root") != NULL || out.len == 0;
	if (!ret)
		error("cannot prepare: '%s' already has a root qdisc of its own (%s); "
		      "klab only replaces the default one, so that restore is exact", nic, out.buf);
	buf_release(&out);
	return ret ? 0 : -1;
}

static int qdisc_apply(const char *nic, const char *args)
{
	struct strvec argv = STRVEC_INIT;
	int ret;

	strvec_push(&argv, "tc");
	strvec_push(&argv, "qdisc");
	strvec_push(&argv, "replace");
	strvec_push(&argv, "dev");
	strvec_push(&argv, nic);
	strvec_push(&argv, "root");
	strvec_split(&argv, args, " \t");
	ret = tc_run((const char *const *)argv.v, NULL);
	strvec_clear(&argv);
	return ret;
}

static int qdisc_remove(const char *nic)
{
	const char *argv[] = { "tc", "qdisc", "del", "dev", nic, "root", NULL };

	return tc_run(argv, NULL);
}

static char *current_boot_id(void)
{
	struct buf b = BUF_INIT;

	if (read_small_file("/proc/sys/kernel/random/boot_id", &b)) {
		buf_release(&b);
		return NULL;
	}
	return buf_detach(&b, NULL);
}

static int save_state(const char *path, const char *name, const struct plan *p)
{
	struct json_object *o = json_object_new_object(), *files = json_object_new_array();
	struct buf b = BUF_INIT;
	char *boot = current_boot_id();
	size_t i;
	int ret;

	json_object_object_add(o, "version", json_object_new_int(1));
	json_object_object_add(o, "boot_id", boot ? json_object_new_string(boot) : NULL);
	free(boot);
	json_object_object_add(o, "profile", name ? json_object_new_string(name) : NULL);
	json_object_object_add(o, "nic", p->nic ? json_object_new_string(p->nic) : NULL);
	if (p->channels) {
		struct json_object *c = json_object_new_object();
		json_object_object_add(c, "combined", json_object_new_boolean(p->ch_combined));
		json_object_object_add(c, "rx", json_object_new_int64(p->ch_combined ? p->ch_old.combined : p->ch_old.rx));
		json_object_object_add(c, "tx", json_object_new_int64(p->ch_combined ? p->ch_old.combined : p->ch_old.tx));
		json_object_object_add(o, "channels", c);
	}
	for (i = 0; i < p->n; i++) {
		struct json_object *f = json_object_new_object();
		json_object_object_add(f, "path", json_object_new_string(p->k[i].path));
		json_object_object_add(f, "old", json_object_new_string(p->k[i].old));
		json_object_object_add(f, "new", p->k[i].new ? json_object_new_string(p->k[i].new) : NULL);
		if (p->k[i].got)
			json_object_object_add(f, "got", json_object_new_string(p->k[i].got));
		json_object_array_add(files, f);
	}
	json_object_object_add(o, "files", files);
	if (p->qdisc)
		json_object_object_add(o, "qdisc", json_object_new_string(p->qdisc));
	json_to_buf(&b, o, 1);
	buf_addch(&b, '\n');
	ret = mkdir_p(agent_state_dir()) ? -1 : write_file_atomic(path, b.buf, b.len, 0600);
	json_object_put(o);
	buf_release(&b);
	return ret;
}

/* Put back saved values: channels first, then files in reverse. Returns the number of failures. */
static int put_back(const char *nic, struct json_object *chan, struct json_object *files, size_t upto)
{
	int fails = 0;
	size_t i;

	if (chan && nic) {
		struct json_object *v;
		int combined = json_object_object_get_ex(chan, "combined", &v) && json_object_get_boolean(v);
		long rx = json_object_object_get_ex(chan, "rx", &v) ? json_object_get_int64(v) : 0;
		long tx = json_object_object_get_ex(chan, "tx", &v) ? json_object_get_int64(v) : 0;
		if (rx > 0 && ethtool_set_channels(nic, combined, rx, tx))
			fails++;
	}
	for (i = upto; i-- > 0;) {
		struct json_object *f = json_object_array_get_idx(files, i), *p, *o, *n;
		if (!json_object_object_get_ex(f, "path", &p) || !json_object_object_get_ex(f, "old", &o)) {
			error("saved tuning: entry %zu without path or old value", i);
			fails++;
			continue;
		}
		/* knobs saved only because a channel change may reset them */
		if (!chan && (!json_object_object_get_ex(f, "new", &n) || !n))
			continue;
		if (!file_exists(json_object_get_string(p))) {
			warn("cannot restore '%s': it does not exist any more", json_object_get_string(p));
			continue;
		}
		if (write_knob(json_object_get_string(p), json_object_get_string(o)))
			fails++;
	}
	return fails;
}

static int profile_str(struct json_object *prof, const char *key, const char **out)
{
	return json_get_str(prof, key, out, "tuning profile") < 0 ? -1 : 0;
}

/*
 * `klab-agent prepare --check`: is the machine still in the state its boot's
 * prepare left? One JSON line (boot_id, release, build_id of the machine now,
 * and "tuning": "none" | "in place" | "lost", with "why"), exit 0, or 1 when
 * the tuning is lost: prepared in another boot (the state file survived a
 * reboot), or a knob no longer shows the value read back after prepare.
 * The orchestrator compares the rest with what it recorded at the boot.
 */
static int prepare_check(void)
{
	struct json_object *o = sysinfo_collect(0), *k = NULL, *out = json_object_new_object(), *st = NULL;
	struct json_object *files = NULL, *v;
	struct buf why = BUF_INIT, b = BUF_INIT;
	char *spath = NULL, *boot = current_boot_id();
	const char *tuning = "none";
	int rc;

	if (json_object_object_get_ex(o, "kernel", &k)) {
		static const char *const keys[] = { "release", "build_id", "boot_id" };
		for (size_t i = 0; i < ARRAY_SIZE(keys); i++)
			if (json_object_object_get_ex(k, keys[i], &v))
				json_object_object_add(out, keys[i], json_object_get(v));
	}
	if (state_path_exists(&spath)) {
		tuning = "in place";
		st = json_parse_file(spath);
		if (!st || json_get_array(st, "files", &files, spath)) {
			tuning = "lost";
			buf_addf(&why, "'%s' is not a saved tuning", spath);
		} else if (json_object_object_get_ex(st, "boot_id", &v) && v && boot &&
			   strcmp(json_object_get_string(v), boot)) {
			tuning = "lost";
			buf_addf(&why, "the tuning was applied in boot %s, the machine is now in boot %s",
				 json_object_get_string(v), boot);
		} else {
			for (size_t i = 0; i < json_object_array_length(files); i++) {
				struct json_object *f = json_object_array_get_idx(files, i), *pa, *want;
				struct buf now = BUF_INIT;
				if (!json_object_object_get_ex(f, "path", &pa) ||
				    !((json_object_object_get_ex(f, "got", &want) && want) ||
				      (json_object_object_get_ex(f, "new", &want) && want)))
					continue;
				if (read_small_file(json_object_get_string(pa), &now)) {
					buf_addf(&why, "'%s' is gone", json_object_get_string(pa));
				} else if (strcmp(now.buf, json_object_get_string(want))) {
					buf_addf(&why, "'%s' is '%s', not '%s' as prepared", json_object_get_string(pa),
						 now.buf, json_object_get_string(want));
				}
				buf_release(&now);
				if (why.len) {
					tuning = "lost";
					break;
				}
			}
		}
	}
	json_object_object_add(out, "tuning", json_object_new_string(tuning));
	if (why.len)
		json_object_object_add(out, "why", json_object_new_string(why.buf));
	json_to_buf(&b, out, 0);
	puts(b.buf);
	rc = why.len ? 1 : 0;
	if (rc)
		error("the prepared tuning is lost: %s", why.buf);
	json_object_put(o);
	json_object_put(out);
	json_object_put(st);
	buf_release(&why);
	buf_release(&b);
	free(spath);
	free(boot);
	return rc;
}

int cmd_prepare(int argc, char **argv)
{
	struct buf in = BUF_INIT;
	struct json_object *prof = NULL, *sys = NULL, *state = NULL;
	struct plan p;
	const char *name = argc > 1 ? argv[1] : NULL;
	const char *xps = NULL, *rps = NULL, *irq = NULL, *gov = NULL;
	char *spath = NULL;
	long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
	int64_t chans = 0;
	int rc = 1, applied_channels = 0, i;
	size_t applied = 0, j;

	memset(&p, 0, sizeof(p));
	if (argc == 2 && !strcmp(argv[1], "--check"))
		return prepare_check();
	if (argc > 2) {
		fprintf(stderr, "usage: klab-agent prepare [NAME] < PROFILE.json | prepare --check\n");
		return 2;
	}
	buf_set_cap(&in, 1 << 20);
	if (buf_read_fd(&in, 0) || !(prof = json_parse(in.buf, in.len, "tuning profile on stdin")))
		goto out;
	if (!json_object_is_type(prof, json_type_object)) {
		error("tuning profile: not a JSON object");
		goto out;
	}
	{
		static const char *const keys[] = { "channels", "xps", "rps", "irq_affinity", "governor",
						     "sysctls", "nic", "name", "qdisc" };
		struct json_object_iterator it = json_object_iter_begin(prof), end = json_object_iter_end(prof);
		for (; !json_object_iter_equal(&it, &end); json_object_iter_next(&it)) {
			const char *k = json_object_iter_peek_name(&it);
			size_t x;
			for (x = 0; x < ARRAY_SIZE(keys); x++)
				if (!strcmp(k, keys[x]))
					break;
			if (x == ARRAY_SIZE(keys)) {
				error("tuning profile: unknown key '%s'", k);
				goto out;
			}
		}
	}
	if (profile_str(prof, "nic", &p.nic) || profile_str(prof, "xps", &xps) ||
	    profile_str(prof, "rps", &rps) || profile_str(prof, "irq_affinity", &irq) ||
	    profile_str(prof, "governor", &gov) || profile_str(prof, "qdisc", &p.qdisc) ||
	    json_get_int(prof, "channels", &chans, "tuning profile") < 0 ||
	    json_get_obj(prof, "sysctls", &sys, "tuning profile") < 0)
		goto out;
	if (!name)
		profile_str(prof, "name", &name);
	if ((xps || rps || irq || chans || p.qdisc) && !p.nic) {
		error("tuning profile: 'nic' is needed for channels, xps, rps, irq_affinity and qdisc");
		goto out;
	}
	if (p.nic) {
		char *d = xasprintf("/sys/class/net/%s", p.nic);
		int ok = file_exists(d);
		free(d);
		if (!ok || strchr(p.nic, '/') || p.nic[0] == '.') {
			error("cannot prepare: no network interface '%s'", p.nic);
			goto out;
		}
	}
	if (chans < 0 || chans > 4096) {
		error("tuning profile: 'channels' out of range: %lld", (long long)chans);
		goto out;
	}
	if (xps && strcmp(xps, "auto") && strcmp(xps, "off")) {
		struct strvec m = STRVEC_INIT;
		strvec_split(&m, xps, ",");
		for (j = 0; j < m.n; j++)
			if (!valid_mask(m.v[j]))
				break;
		if (!m.n || j < m.n) {
			error("tuning profile: bad 'xps' value '%s' (auto, off, or hex masks such as 1,2,4,8)", xps);
			strvec_clear(&m);
			goto out;
		}
		strvec_clear(&m);
	}
	if (rps && strcmp(rps, "off") && !valid_mask(rps)) {
		error("tuning profile: bad 'rps' value '%s' (off, or one hex mask)", rps);
		goto out;
	}
	if (state_path_exists(&spath)) {
		error("cannot prepare: a tuning is already applied (saved in '%s'): run 'klab-agent restore' first", spath);
		goto out;
	}

	/* 1 + 2: every knob must exist; read what may change */
	if (chans) {
		if (ethtool_channels(p.nic, &p.ch_old))
			goto out;
		p.ch_combined = p.ch_old.combined >= 0;
		if (p.ch_combined ? chans > p.ch_old.max_combined
				  : (chans > p.ch_old.max_rx || chans > p.ch_old.max_tx)) {
			error("cannot prepare: '%s' supports at most %ld channels, the profile asks for %lld",
			      p.nic, p.ch_combined ? p.ch_old.max_combined : p.ch_old.max_rx, (long long)chans);
			goto out;
		}
		p.channels = chans;
	}
	if (p.nic && (xps || rps || chans)) {
		int ntx = queue_count(p.nic, "tx-"), nrx = queue_count(p.nic, "rx-");
		for (i = 0; i < ntx; i++) {
			char *path = xasprintf("/sys/class/net/%s/queues/tx-%d/xps_cpus", p.nic, i);
			int r = plan_add_opt(&p, "the XPS knob", path, NULL, !xps);
			free(path);
			if (r && xps)
				goto out;
		}
		for (i = 0; i < nrx; i++) {
			char *path = xasprintf("/sys/class/net/%s/queues/rx-%d/rps_cpus", p.nic, i);
			int r = plan_add_opt(&p, "the RPS knob", path, NULL, !rps);
			free(path);
			if (r && rps)
				goto out;
		}
		if ((xps && !ntx) || (rps && !nrx)) {
			error("cannot prepare: '%s' has no %s queues", p.nic, xps && !ntx ? "tx" : "rx");
			goto out;
		}
	}
	if (irq) {
		/*
		 * A PCI NIC has its MSI vectors in device/msi_irqs; a virtio NIC's
		 * device is the virtio device, and the vectors (config, input.N,
		 * output.N) are its PCI parent's, one virtio device per function.
		 */
		char *dir = xasprintf("/sys/class/net/%s/device/msi_irqs", p.nic);
		DIR *d = opendir(dir);
		struct dirent *e;
		struct strvec lists = STRVEC_INIT;
		int n = 0;
		free(dir);
		if (!d) {
			dir = xasprintf("/sys/class/net/%s/device/../msi_irqs", p.nic);
			d = opendir(dir);
			free(dir);
		}
		if (!d) {
			error("cannot prepare: '%s' has no IRQs of its own (no device/msi_irqs, nor its parent's: "
			      "a virtual device?)", p.nic);
			goto out;
		}
		if (strcmp(irq, "auto"))
			strvec_split(&lists, irq, " ");
		while ((e = readdir(d))) {
			long nr;
			char *path, *val;
			if (parse_long(e->d_name, 0, 1 << 24, &nr))
				continue;
			path = xasprintf("/proc/irq/%ld/smp_affinity_list", nr);
			val = lists.n ? xstrdup(lists.v[n % lists.n]) : xasprintf("%ld", n % ncpu);
			i = plan_add(&p, "the IRQ affinity knob", path, val);
			free(path);
			free(val);
			n++;
			if (i) {
				closedir(d);
				strvec_clear(&lists);
				goto out;
			}
		}
		closedir(d);
		strvec_clear(&lists);
	}
	if (gov) {
		for (i = 0; i < ncpu; i++) {
			char *path = xasprintf("/sys/devices/system/cpu/cpu%d/cpufreq/scaling_governor", i);
			int r = plan_add(&p, "the cpufreq governor knob", path, gov);
			free(path);
			if (r)
				goto out;
		}
	}
	if (sys) {
		struct json_object_iterator it = json_object_iter_begin(sys), end = json_object_iter_end(sys);
		for (; !json_object_iter_equal(&it, &end); json_object_iter_next(&it)) {
			const char *key = json_object_iter_peek_name(&it);
			struct json_object *v = json_object_iter_peek_value(&it);
			char *path, *q, *what;
			const char *val;
			int r;
			if (!*key || strstr(key, "..") || strchr(key, '/') || key[0] == '.') {
				error("tuning profile: bad sysctl name '%s'", key);
				goto out;
			}
			if (!json_object_is_type(v, json_type_string) && !json_object_is_type(v, json_type_int)) {
				error("tuning profile: sysctl '%s' must be a string or an integer", key);
				goto out;
			}
			val = json_object_get_string(v);
			path = xasprintf("/proc/sys/%s", key);
			for (q = path + 10; *q; q++)
				if (*q == '.')
					*q = '/';
			what = xasprintf("sysctl '%s'", key);
			r = plan_add(&p, what, path, val);
			free(what);
			free(path);
			if (r)
				goto out;
		}
	}
	if (p.qdisc && qdisc_is_default(p.nic))
		goto out;
	if (save_state(spath, name, &p))
		goto out;

	/* 3: apply, in order */
	if (p.channels) {
		if (ethtool_set_channels(p.nic, p.ch_combined, p.channels, p.channels))
			goto rollback;
		applied_channels = 1;
	}
	if (xps) {
		int ntx = queue_count(p.nic, "tx-");
		for (i = 0; i < ntx; i++) {
			char *path = xasprintf("/sys/class/net/%s/queues/tx-%d/xps_cpus", p.nic, i);
			struct knob *k = plan_find(&p, path);
			char *m = xps_mask(xps, i, ncpu);
			if (k) {
				free(k->new);
				k->new = m;
			} else {
				free(m);
			}
			free(path);
		}
	}
	if (rps) {
		int nrx = queue_count(p.nic, "rx-");
		for (i = 0; i < nrx; i++) {
			char *path = xasprintf("/sys/class/net/%s/queues/rx-%d/rps_cpus", p.nic, i);
			struct knob *k = plan_find(&p, path);
			if (k) {
				free(k->new);
				k->new = xstrdup(strcmp(rps, "off") ? rps : "0");
			}
			free(path);
		}
	}
	/* a knob can exist and still refuse writes (sysctls owned by the initial netns) */
	for (j = 0; j < p.n; j++) {
		int fd;
		if (!p.k[j].new)
			continue;
		fd = open(p.k[j].path, O_WRONLY | O_CLOEXEC);
		if (fd < 0) {
			error_errno("cannot prepare: '%s' cannot be written here", p.k[j].path);
			goto rollback;
		}
		close(fd);
	}
	/* the state file records the new values too, for the record */
	if (save_state(spath, name, &p))
		goto rollback;
	for (applied = 0; applied < p.n; applied++) {
		if (!p.k[applied].new)
			continue;
		if (write_knob(p.k[applied].path, p.k[applied].new))
			goto rollback;
	}
	if (p.qdisc && qdisc_apply(p.nic, p.qdisc))
		goto rollback;	/* nothing of the qdisc to undo: replace failed */
	/* what the kernel shows now is what `prepare --check` expects (masks and lists read back normalised) */
	for (j = 0; j < p.n; j++) {
		struct buf got = BUF_INIT;
		if (p.k[j].new && !read_small_file(p.k[j].path, &got))
			p.k[j].got = buf_detach(&got, NULL);
		buf_release(&got);
	}
	if (save_state(spath, name, &p))
		goto rollback;
	state = json_parse_file(spath);
	if (state) {
		struct buf b = BUF_INIT;
		json_to_buf(&b, state, 1);
		puts(b.buf);
		buf_release(&b);
	}
	rc = 0;
	goto out;

rollback:
	{
		struct json_object *files = json_object_new_array(), *chan = NULL;
		for (j = 0; j < p.n; j++) {
			struct json_object *f = json_object_new_object();
			json_object_object_add(f, "path", json_object_new_string(p.k[j].path));
			json_object_object_add(f, "old", json_object_new_string(p.k[j].old));
			/* only what was written (before the failing one) is written back */
			json_object_object_add(f, "new", j < applied && p.k[j].new ?
					       json_object_new_string(p.k[j].new) : NULL);
			json_object_array_add(files, f);
		}
		if (applied_channels) {
			chan = json_object_new_object();
			json_object_object_add(chan, "combined", json_object_new_boolean(p.ch_combined));
			json_object_object_add(chan, "rx", json_object_new_int64(p.ch_combined ? p.ch_old.combined : p.ch_old.rx));
			json_object_object_add(chan, "tx", json_object_new_int64(p.ch_combined ? p.ch_old.combined : p.ch_old.tx));
		}
		/* every saved file is written back (not only those applied): they hold the old values */
		if (put_back(p.nic, chan, files, p.n)) {
			error("cannot prepare, and the rollback is incomplete: saved values kept in '%s' for 'klab-agent restore'",
			      spath);
		} else {
			unlink(spath);
			error("cannot prepare: rolled back every change");
		}
		json_object_put(files);
		json_object_put(chan);
	}
out:
	plan_free(&p);
	json_object_put(prof);
	json_object_put(state);
	buf_release(&in);
	free(spath);
	return rc;
}

int cmd_restore(int argc, char **argv)
{
	struct json_object *st, *files = NULL, *chan = NULL, *v;
	const char *nic = NULL;
	char *spath;
	int fails;

	if (argc != 1) {
		fprintf(stderr, "usage: klab-agent restore\n");
		return 2;
	}
	if (!state_path_exists(&spath)) {
		info("nothing to restore: no saved tuning in '%s'", spath);
		printf("nothing to restore\n");
		free(spath);
		return 0;
	}
	if (!(st = json_parse_file(spath))) {
		free(spath);
		return 1;
	}
	if (json_get_int(st, "version", &(int64_t){ 0 }, spath) < 0 ||
	    json_get_array(st, "files", &files, spath) ||
	    json_get_obj(st, "channels", &chan, spath) < 0) {
		error("'%s' is not a saved tuning", spath);
		json_object_put(st);
		free(spath);
		return 1;
	}
	if (json_object_object_get_ex(st, "nic", &v) && v)
		nic = json_object_get_string(v);
	fails = 0;
	if (nic && json_object_object_get_ex(st, "qdisc", &v) && v && qdisc_remove(nic))
		fails++;
	fails += put_back(nic, chan, files, json_object_array_length(files));
	if (fails) {
		error("cannot restore %d value(s); the saved tuning stays in '%s'", fails, spath);
	} else if (unlink(spath)) {
		error_errno("cannot remove '%s'", spath);
		fails = 1;
	} else {
		printf("restored %zu value(s)%s\n", json_object_array_length(files), chan ? " and the channels" : "");
	}
	json_object_put(st);
	free(spath);
	return fails ? 1 : 0;
}
