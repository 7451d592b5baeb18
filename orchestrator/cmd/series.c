/* cmd/series.c: `klab series show|import|list`: patch intake from the command line. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "buf.h"
#include "cmd.h"
#include "store/series.h"
#include "store/db.h"
#include "intake/intake.h"
#include "log.h"
#include "intake/series.h"
#include "strvec.h"
#include "util.h"

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

/* ---- options ---------------------------------------------------------------------- */

static const char *subject, *lore_url, *patchwork_url;
static long timeout_ms, series_id;
static int with_diff, intake;

#define FETCH_OPTS \
	OPT_STRING(0, "subject", &subject, "S", "the subject of a bare patch (no mail headers)"), \
	OPT_STRING(0, "lore-url", &lore_url, "URL", "lore's base URL (default: $KLAB_LORE_URL, else lore.kernel.org/all)"), \
	OPT_STRING(0, "patchwork-url", &patchwork_url, "URL", \
		   "patchwork's base URL (default: $KLAB_PATCHWORK_URL, else patchwork.kernel.org)"), \
	OPT_DURATION(0, "timeout", &timeout_ms, "DURATION", 1, 86400000, \
		     "per HTTP request (default: $KLAB_FETCH_TIMEOUT, else 60s)")

static const struct opt show_opts[] = {
	FETCH_OPTS,
	OPT_INT(0, "id", &series_id, "ID", 1, 1L << 62, "a stored series instead of a SOURCE"),
	OPT_BOOL(0, "diff", &with_diff, "print the diff of every patch too"),
	/* klab's own intake helper (intake.c), run in the sandbox: parse here, answer in JSON */
	OPT_SET_INT_F(0, "intake", &intake, 1, "be klab's intake helper", OPT_HIDDEN),
	OPT_JSON(),
	OPT_END(),
};
static const struct opt import_opts[] = { FETCH_OPTS, OPT_JSON(), OPT_END() };
static const struct opt list_opts[] = { OPT_JSON(), OPT_CSV(), OPT_END() };

static const char sources_doc[] =
	"SOURCE: FILE | mbox:FILE | - (standard input) | lore:MSGID | patchwork:ID; several\n"
	"are read as one thread (a series and the replies that carry its trailers).\n";
static const char *const show_usage[] = { "SOURCE... [--subject S] [--diff] [--json]", "--id ID [--diff] [--json]", NULL };
static const char *const import_usage[] = { "SOURCE... [--subject S] [--json]", NULL };
static const char *const list_usage[] = { "[--json|--csv]", NULL };
static const struct opt_spec show_spec = {
	"klab series show", show_usage, "read a patch series and print its patches, claims and proposed workloads",
	sources_doc, show_opts,
};
static const struct opt_spec import_spec = {
	"klab series import", import_usage, "store a series (by its content hash: importing it twice changes nothing)",
	sources_doc, import_opts,
};
static const struct opt_spec list_spec = {
	"klab series list", list_usage, "the stored series: version, patches, claims, subject", NULL, list_opts,
};

static struct series_opts fetch_opts(void)
{
	struct series_opts o = { .subject = subject, .lore_url = lore_url, .patchwork_url = patchwork_url,
				 .timeout_ms = timeout_ms };

	return o;
}

/* ---- list --------------------------------------------------------------------------- */

static const char *const series_cols[] = {
	"id", "subject", "version", "total", "source", "created", "patches", "expectations", NULL,
};

static int list_one(const struct series_item *it, void *data)
{
	const struct series_row *r = it->s;

	print_obj_begin(NULL);
	print_data_int("id", r->id);
	print_data_str("subject", r->subject);
	print_data_int("version", (int)r->version);
	print_data_int("total", (int)r->total);
	print_data_str("source", r->source);
	print_data_time("created", r->created);
	print_data_int("patches", (int)it->patches);
	print_data_int("expectations", (int)it->claims);
	print_text("%-5lld v%-2d %3d/%-3d %-5d %s\n", (long long)r->id, (int)r->version, (int)it->patches,
		   (int)r->total, (int)it->claims, r->subject ? r->subject : "");
	print_obj_end();
	return 0;
}

static int series_list(int argc, char **argv, struct klab_ctx *ctx)
{
	struct db *db;
	int s;

	if ((argc = cmd_parse(&list_spec, argc, argv, &s)) < 0)
		return s;
	if (argc)
		return cmd_usage_error(&list_spec, "unexpected argument '%s'", argv[0]);
	if (!(db = ctx_db(ctx)))
		return 1;
	cmd_print_begin();
	print_text("%-5s %-3s %-7s %-5s %s\n", "ID", "VER", "PATCHES", "CLAIM", "SUBJECT");
	print_list_begin(NULL, series_cols);
	series_each(db, list_one, NULL);
	print_list_end();
	return cmd_print_end();
}

/* ---- show, import --------------------------------------------------------------------- */

/* The series of SOURCE... (read as one thread), or of --id. */
static int load(int argc, char **argv, struct klab_ctx *ctx, struct series **s)
{
	struct series_opts o = fetch_opts();
	struct strvec srcs = STRVEC_INIT;
	char *joined;
	struct db *db;
	int ret;

	if (series_id) {
		db = ctx_db(ctx);
		return !db || series_load_db(db, series_id, s, NULL) < 0 ? -1 : 0;
	}
	for (int i = 0; i < argc; i++)
		strvec_push(&srcs, argv[i]);
	joined = strvec_join(&srcs, "\n");
	if (intake) {
		/* we are the helper, already in the sandbox: the files' texts come from klab on stdin */
		struct buf in = BUF_INIT;
		struct series_text *texts = xcalloc(argc ? argc : 1, sizeof(*texts));

		if (buf_read_fd(&in, 0) < 0) {
			ret = error_errno("intake helper: cannot read standard input");
		} else if (intake_read_texts(in.buf, in.len, argc, texts) < 0) {
			ret = -1;
		} else {
			o.texts = texts;
			o.n_texts = argc;
			ret = series_load(joined, &o, s) < 0 ? -1 : 0;
		}
		free(texts);
		buf_release(&in);
	} else {
		int failed;
		const struct klab_config *cfg = ctx_config_optional(ctx, &failed);

		ret = failed || series_load_sandboxed(cfg, joined, &o, s) < 0 ? -1 : 0;
	}
	free(joined);
	strvec_clear(&srcs);
	return ret;
}

static int series_show(int argc, char **argv, struct klab_ctx *ctx)
{
	struct series *s = NULL;
	int st;

	if ((argc = cmd_parse(&show_spec, argc, argv, &st)) < 0)
		return st;
	if (series_id && argc)
		return cmd_usage_error(&show_spec, "--id goes with no SOURCE");
	if (!series_id && !argc)
		return cmd_usage_error(&show_spec, "needs a SOURCE");
	if (load(argc, argv, ctx, &s) < 0)
		return 1;
	cmd_print_begin();
	print_data_json(NULL, series_to_json(s, intake));
	if (series_id)
		print_data_int("id", series_id);
	if (print_is(PRINT_TEXT))
		print_series(stdout, s, with_diff, series_id);
	series_free(s);
	return cmd_print_end();
}

static int series_import(int argc, char **argv, struct klab_ctx *ctx)
{
	struct series *s = NULL;
	struct db *db;
	int64_t sid;
	int st, existed, ret = 1;

	if ((argc = cmd_parse(&import_spec, argc, argv, &st)) < 0)
		return st;
	if (!argc)
		return cmd_usage_error(&import_spec, "needs a SOURCE");
	if (load(argc, argv, ctx, &s) < 0)
		return 1;
	db = ctx_db(ctx);
	if (!db || series_store(db, s, &sid, &existed, NULL) < 0)
		goto out;
	cmd_print_begin();
	print_int(PRINT_ANY, "id", "%lld\n", sid);
	print_data_bool("existed", existed);
	print_data_str("subject", s->subject);
	print_data_int("patches", s->n_patches);
	print_data_int("expectations", s->n_claims);
	print_data_int("proposals", s->n_proposals);
	print_data_str("content_sha256", s->content_sha256);
	if (print_is(PRINT_TEXT))
		fprintf(stderr, "series %lld %s: %s (%zu patch%s, %zu expectation%s, %zu proposal%s)\n",
			(long long)sid, existed ? "already stored" : "stored", s->subject, s->n_patches,
			s->n_patches == 1 ? "" : "es", s->n_claims, s->n_claims == 1 ? "" : "s",
			s->n_proposals, s->n_proposals == 1 ? "" : "s");
	ret = cmd_print_end();
out:
	series_free(s);
	return ret;
}

static const struct klab_cmd series_cmds[] = {
	{ "show", series_show, &show_spec, NULL, 0 },
	{ "import", series_import, &import_spec, NULL, 0 },
	{ "list", series_list, &list_spec, NULL, CMD_LISTING },
};
static const struct klab_cmd *const series_subs[] = { &series_cmds[0], &series_cmds[1], &series_cmds[2], NULL };
static const struct opt_spec series_spec = {
	"klab series", NULL, "read a patch series (mbox file, lore:MSGID, patchwork:ID, text file) and its claims",
	NULL, NULL,
};
const struct klab_cmd cmd_series = { "series", NULL, &series_spec, series_subs, 0 };
