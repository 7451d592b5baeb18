/* cmd/series.c: `klab series show|import|list`: patch intake from the command line. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "buf.h"
#include "cmd.h"
#include "db.h"
#include "jsonh.h"
#include "log.h"
#include "series.h"
#include "strvec.h"
#include "util.h"

static int usage(void)
{
	fprintf(stderr,
		"usage: klab series show SOURCE... [--subject S] [--diff] [--json]\n"
		"       klab series show --id ID [--diff] [--json]\n"
		"       klab series import SOURCE... [--subject S] [--json]\n"
		"       klab series list [--json]\n"
		"SOURCE: FILE | mbox:FILE | lore:MSGID | patchwork:ID (several: read as one thread)\n"
		"options: --lore-url URL, --patchwork-url URL, --timeout DURATION\n");
	return 2;
}

static void print_indented(FILE *f, const char *text, const char *ind)
{
	const char *p = text;

	while (p && *p) {
		const char *nl = strchr(p, '\n');
		int l = nl ? (int)(nl - p) : (int)strlen(p);

		fprintf(f, "%s%.*s\n", l ? ind : "", l, p);
		p = nl ? nl + 1 : NULL;
	}
}

static void print_series(FILE *f, const struct series *s, int with_diff, int64_t id)
{
	if (id)
		fprintf(f, "series %lld: %s\n", (long long)id, s->subject);
	else
		fprintf(f, "series: %s\n", s->subject);
	fprintf(f, "source: %s (%s)\n", s->source, s->format ? s->format : "?");
	if (s->source_url)
		fprintf(f, "url: %s\n", s->source_url);
	fprintf(f, "version: %d\n", s->version);
	fprintf(f, "patches: %zu of %d\n", s->n_patches, s->total);
	if (s->author)
		fprintf(f, "author: %s\n", s->author);
	if (s->date)
		fprintf(f, "date: %s\n", s->date);
	if (s->message_id)
		fprintf(f, "message-id: <%s>\n", s->message_id);
	fprintf(f, "content: %s\n", s->content_sha256);
	if (s->cover) {
		fprintf(f, "cover letter:\n");
		print_indented(f, s->cover, "    ");
	}
	for (size_t i = 0; i < s->n_patches; i++) {
		const struct patch *p = &s->patches[i];

		fprintf(f, "\npatch %d/%d: %s\n", p->seq, s->total, p->subject);
		if (p->author)
			fprintf(f, "  author: %s\n", p->author);
		if (p->date)
			fprintf(f, "  date: %s\n", p->date);
		if (p->message_id)
			fprintf(f, "  message-id: <%s>\n", p->message_id);
		if (p->n_trailers) {
			fprintf(f, "  trailers:\n");
			for (size_t t = 0; t < p->n_trailers; t++) {
				fprintf(f, "    %s: %s", p->trailers[t].tag, p->trailers[t].value);
				if (p->trailers[t].from)
					fprintf(f, " (in a reply from %s)", p->trailers[t].from);
				fputc('\n', f);
			}
		}
		fprintf(f, "  diffstat:\n");
		print_indented(f, p->diffstat, "  ");
		fprintf(f, "  message:\n");
		print_indented(f, p->body, "    ");
		if (with_diff) {
			fprintf(f, "  diff:\n");
			print_indented(f, p->diff, "    ");
		}
	}
	fprintf(f, "\nexpectations:%s\n", s->n_claims ? "" : " none");
	for (size_t i = 0; i < s->n_claims; i++) {
		const struct claim *c = &s->claims[i];

		fprintf(f, "  %s %d: %s %s by ", c->patch_seq ? "patch" : "cover", c->patch_seq, c->metric,
			c->direction);
		if (fabs(c->lo_pct - c->hi_pct) < 0.005)
			fprintf(f, "%.2f%%", c->lo_pct);
		else
			fprintf(f, "%.2f%%..%.2f%%", c->lo_pct, c->hi_pct);
		if (!isnan(c->before))
			fprintf(f, " (%g -> %g%s%s)", c->before, c->after, c->unit ? " " : "", c->unit ? c->unit : "");
		fprintf(f, "\n    \"%s\"\n", c->text);
	}
	fprintf(f, "proposed workloads:%s\n", s->n_proposals ? "" : " none");
	for (size_t i = 0; i < s->n_proposals; i++) {
		const struct proposal *p = &s->proposals[i];
		char *params = strvec_join(&p->params, " ");

		fprintf(f, "  %s %d: %s (type %s): %s\n", p->patch_seq ? "patch" : "cover", p->patch_seq,
			p->name, p->type, params);
		fprintf(f, "    from: %s\n", p->command);
		if (p->context)
			fprintf(f, "    tested: %s\n", p->context);
		free(params);
	}
	if (s->notes.n) {
		fprintf(f, "notes:\n");
		for (size_t i = 0; i < s->notes.n; i++)
			fprintf(f, "  %s\n", s->notes.v[i]);
	}
}

static int print_json(struct json_object *o)
{
	struct buf b = BUF_INIT;

	json_to_buf(&b, o, 1);
	fputs(b.buf, stdout);
	if (b.len && b.buf[b.len - 1] != '\n')
		fputc('\n', stdout);
	buf_release(&b);
	json_object_put(o);
	return 0;
}

static int finish(int rc)
{
	if (fflush(stdout) || ferror(stdout))
		return error_errno("cannot write to stdout") ? 1 : 1;
	return rc;
}

static int series_list(struct klab_ctx *ctx, int json)
{
	struct db *db = ctx_db(ctx);
	struct db_stmt *st;
	struct json_object *a;

	if (!db)
		return 1;
	st = db_prepare(db, "SELECT s.id, s.subject, s.version, s.total, s.source, s.created,"
			" (SELECT COUNT(*) FROM patches p WHERE p.series_id = s.id),"
			" (SELECT COUNT(*) FROM expectations e WHERE e.series_id = s.id)"
			" FROM series s ORDER BY s.id", "");
	if (!st)
		return 1;
	a = json_object_new_array();
	if (!json)
		printf("%-5s %-3s %-7s %-5s %s\n", "ID", "VER", "PATCHES", "CLAIM", "SUBJECT");
	while (db_step(st) == DB_ROW) {
		const char *subj = db_col_text(st, 1);

		if (json) {
			struct json_object *o = json_object_new_object();

			json_object_object_add(o, "id", json_object_new_int64(db_col_int64(st, 0)));
			json_object_object_add(o, "subject", subj ? json_object_new_string(subj) : NULL);
			json_object_object_add(o, "version", json_object_new_int(db_col_int(st, 2)));
			json_object_object_add(o, "total", json_object_new_int(db_col_int(st, 3)));
			json_object_object_add(o, "source",
					       json_object_new_string(db_col_text(st, 4)));
			json_object_object_add(o, "created", json_object_new_double(db_col_double(st, 5)));
			json_object_object_add(o, "patches", json_object_new_int(db_col_int(st, 6)));
			json_object_object_add(o, "expectations", json_object_new_int(db_col_int(st, 7)));
			json_object_array_add(a, o);
		} else {
			printf("%-5lld v%-2d %3d/%-3d %-5d %s\n", (long long)db_col_int64(st, 0),
			       db_col_int(st, 2), db_col_int(st, 6), db_col_int(st, 3),
			       db_col_int(st, 7), subj ? subj : "");
		}
	}
	db_finalize(st);
	if (json)
		print_json(a);
	else
		json_object_put(a);
	return finish(0);
}

int oldcmd_series(int argc, char **argv, struct klab_ctx *ctx)
{
	struct series_opts o = { 0 };
	struct strvec srcs = STRVEC_INIT;
	struct series *s = NULL;
	const char *sub;
	int json = ctx->json, with_diff = 0, rc = 1;
	long id = 0;
	char *joined = NULL;

	if (argc < 2)
		return usage();
	sub = argv[1];
	if (!strcmp(sub, "--help") || !strcmp(sub, "-h") || !strcmp(sub, "help"))
		return usage() ? 0 : 0;
	for (int i = 2; i < argc; i++) {
		const char *a = argv[i];

		if (!strcmp(a, "--json")) {
			json = 1;
		} else if (!strcmp(a, "--diff")) {
			with_diff = 1;
		} else if (!strcmp(a, "--subject") || !strcmp(a, "--lore-url") || !strcmp(a, "--patchwork-url") ||
			   !strcmp(a, "--timeout") || !strcmp(a, "--id")) {
			if (i + 1 >= argc) {
				error("option '%s' needs a value", a);
				goto usage;
			}
			if (!strcmp(a, "--subject"))
				o.subject = argv[++i];
			else if (!strcmp(a, "--lore-url"))
				o.lore_url = argv[++i];
			else if (!strcmp(a, "--patchwork-url"))
				o.patchwork_url = argv[++i];
			else if (!strcmp(a, "--id")) {
				if (parse_long(argv[++i], 1, 1L << 62, &id) < 0) {
					error("invalid --id '%s': expected a series id", argv[i]);
					goto usage;
				}
			} else if (parse_duration_ms(argv[++i], &o.timeout_ms) < 0 || o.timeout_ms <= 0) {
				error("invalid --timeout '%s': expected a duration such as 30s", argv[i]);
				goto usage;
			}
		} else if (a[0] == '-' && a[1]) {
			error("unknown option '%s' of 'klab series %s'", a, sub);
			goto usage;
		} else {
			strvec_push(&srcs, a);
		}
	}

	if (!strcmp(sub, "list")) {
		rc = series_list(ctx, json);
		goto out;
	}
	if (strcmp(sub, "show") && strcmp(sub, "import")) {
		error("unknown series subcommand '%s' (show, import, list)", sub);
		goto usage;
	}
	if (id) {
		struct db *db;

		if (strcmp(sub, "show") || srcs.n) {
			error("--id goes with 'klab series show' and no SOURCE");
			goto usage;
		}
		db = ctx_db(ctx);
		if (!db || series_load_db(db, id, &s) < 0)
			goto out;
		if (json) {
			struct json_object *jo = series_to_json(s);

			json_object_object_add(jo, "id", json_object_new_int64(id));
			print_json(jo);
		} else {
			print_series(stdout, s, with_diff, id);
		}
		rc = finish(0);
		goto out;
	}
	if (!srcs.n) {
		error("'klab series %s' needs a SOURCE", sub);
		goto usage;
	}
	joined = strvec_join(&srcs, "\n");
	if (series_load(joined, &o, &s) < 0)
		goto out;
	if (!strcmp(sub, "show")) {
		if (json)
			print_json(series_to_json(s));
		else
			print_series(stdout, s, with_diff, 0);
		rc = finish(0);
	} else {
		struct db *db = ctx_db(ctx);
		int64_t sid;
		int existed;

		if (!db || series_store(db, s, &sid, &existed) < 0)
			goto out;
		if (json) {
			struct json_object *jo = json_object_new_object();

			json_object_object_add(jo, "id", json_object_new_int64(sid));
			json_object_object_add(jo, "existed", json_object_new_boolean(existed));
			json_object_object_add(jo, "subject", json_object_new_string(s->subject));
			json_object_object_add(jo, "patches", json_object_new_int((int)s->n_patches));
			json_object_object_add(jo, "expectations", json_object_new_int((int)s->n_claims));
			json_object_object_add(jo, "proposals", json_object_new_int((int)s->n_proposals));
			json_object_object_add(jo, "content_sha256", json_object_new_string(s->content_sha256));
			print_json(jo);
		} else {
			printf("%lld\n", (long long)sid);
			fprintf(stderr, "series %lld %s: %s (%zu patch%s, %zu expectation%s, %zu proposal%s)\n",
				(long long)sid, existed ? "already stored" : "stored", s->subject, s->n_patches,
				s->n_patches == 1 ? "" : "es", s->n_claims, s->n_claims == 1 ? "" : "s",
				s->n_proposals, s->n_proposals == 1 ? "" : "s");
		}
		rc = finish(0);
	}
	goto out;
usage:
	rc = usage();
out:
	series_free(s);
	strvec_clear(&srcs);
	free(joined);
	return rc;
}
