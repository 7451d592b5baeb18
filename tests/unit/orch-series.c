/* orch-series.c: unit tests of patch intake on the seed mails and the malformed corpus, and of storing series. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "buf.h"
#include "store/db.h"
#include "log.h"
#include "intake/series.h"
#include "tap.h"
#include "util.h"

static char *data(const char *name)
{
	return xasprintf("%s/series/%s", tap_data_dir(), name);
}

static struct series *load(const char *name, const char *subject)
{
	struct series_opts o = { .subject = subject };
	struct series *s = NULL;
	char *p = data(name);

	if (series_load(p, &o, &s) < 0)
		s = NULL;
	free(p);
	return s;
}

static const struct trailer *trailer(const struct patch *p, const char *tag)
{
	for (size_t i = 0; i < p->n_trailers; i++)
		if (!strcmp(p->trailers[i].tag, tag))
			return &p->trailers[i];
	return NULL;
}

static const char *param(const struct proposal *p, const char *key)
{
	size_t kl = strlen(key);

	for (size_t i = 0; i < p->params.n; i++)
		if (!strncmp(p->params.v[i], key, kl) && p->params.v[i][kl] == '=')
			return p->params.v[i] + kl + 1;
	return NULL;
}

static void seed000(void)
{
	struct series *s = load("seeds/000_951f765891bfd14f.txt", "net: control skb->ooo_okay from skb_set_owner_w()");

	ok(s != NULL, "seed 000 loads");
	if (!s)
		return;
	is_str(s->format, "plain", "000: plain commit message + diff");
	is_int(s->n_patches, 1, "000: one patch");
	is_int(s->total, 1, "000: a one-patch series");
	is_str(s->subject, "net: control skb->ooo_okay from skb_set_owner_w()", "000: subject from --subject");
	is_str(s->patches[0].author, "Eric Dumazet <edumazet@google.com>", "000: author from Signed-off-by");
	is_int(s->patches[0].insertions, 11, "000: 11 insertions");
	is_int(s->patches[0].deletions, 1, "000: 1 deletion");
	is_str(s->patches[0].diffstat, " net/core/sock.c | 12 +++++++++++-\n 1 file changed, 11 insertions(+), 1 deletion(-)",
	       "000: diffstat as git prints it");
	ok(starts_with(s->patches[0].diff, "diff --git a/net/core/sock.c b/net/core/sock.c\n"), "000: diff starts at diff --git");
	ok(ends_with(s->patches[0].diff, " EXPORT_SYMBOL(skb_set_owner_w);\n \n"), "000: diff ends with the hunk, not the signature");
	ok(ends_with(s->patches[0].body, "Reviewed-by: Neal Cardwell <ncardwell@google.com>"), "000: body ends before ---");
	is_int(s->patches[0].n_trailers, 2, "000: two trailers");
	ok(trailer(&s->patches[0], "Reviewed-by") != NULL, "000: Reviewed-by");
	is_int(s->n_claims, 1, "000: one claim");
	if (s->n_claims == 1) {
		is_str(s->claims[0].metric, "cpu_us_per_op", "000: cost metric");
		is_str(s->claims[0].direction, "lower", "000: lower");
		is_double(s->claims[0].lo_pct, 10, 1e-9, "000: from 10%%");
		is_double(s->claims[0].hi_pct, 20, 1e-9, "000: to 20%%");
		ok(isnan(s->claims[0].before), "000: no figures");
	}
	is_int(s->n_proposals, 1, "000: one proposed workload");
	if (s->n_proposals == 1) {
		const struct proposal *p = &s->proposals[0];

		is_str(p->type, "udp_rr", "000: udp_rr");
		is_str(p->name, "udp_rr_500", "000: name");
		is_str(param(p, "flows"), "500", "000: 500 flows");
		is_str(param(p, "request_size"), "100", "000: request 100");
		is_str(param(p, "response_size"), "100", "000: response 100");
		is_str(param(p, "duration"), "1000", "000: duration 1000");
		is_str(p->command, "super_netperf 500 -t UDP_RR -H <host> -l 1000 -- -r 100,100 -Nn &", "000: command");
		is_str(p->context, "500 concurrent UDP_RR connected UDP flows, host with 32 TX queues, 512 cpus, XPS setup.",
		       "000: the Tested: description");
	}
	series_free(s);

	s = load("seeds/000_951f765891bfd14f.txt", NULL);
	ok(s && !strcmp(s->subject, "(no subject)") && s->notes.n == 1, "000 without --subject: '(no subject)' and a note");
	series_free(s);
}

static void seed001(void)
{
	struct series *s = load("seeds/001_d9fa56d5ad71ed87.txt", NULL);
	char *a = data("seeds/000_951f765891bfd14f.txt"), *b = data("seeds/001_d9fa56d5ad71ed87.txt");
	char *both = xasprintf("%s\n%s", a, b);
	struct series_opts o = { .subject = "[PATCH RFC net-next 2/4] net: control skb->ooo_okay from skb_set_owner_w()" };

	ok(s == NULL, "001 alone: a reply without a diff is no series");
	s = NULL;
	ok(series_load(both, &o, &s) == 0, "000 + 001 load as one thread");
	if (s) {
		is_int(s->patches[0].seq, 2, "000+001: numbered 2 by its subject");
		is_int(s->total, 4, "000+001: of 4");
		is_str(s->format, "plain", "000+001: format of the first source");
		ok(trailer(&s->patches[0], "Reviewed-by") && !strcmp(trailer(&s->patches[0], "Reviewed-by")->value,
								   "Neal Cardwell <ncardwell@google.com>"),
		   "000+001: the reply's Reviewed-by is on the patch");
		is_int(s->patches[0].n_trailers, 2, "000+001: the same trailer is not repeated");
		ok(s->notes.n == 1 && strstr(s->notes.v[0], "1/4, 3/4, 4/4"), "000+001: missing patches noted");
	}
	series_free(s);
	free(a);
	free(b);
	free(both);
}

static void seed003(void)
{
	struct series *s = load("seeds/003_1ddf0ef0bfe7a1c4.txt", NULL);

	ok(s != NULL, "seed 003 loads");
	if (!s)
		return;
	is_str(s->format, "thread text", "003: thread text");
	is_str(s->subject, "optimise UDP skb completion wakeups", "003: cover subject");
	ok(s->cover && starts_with(s->cover, "sock_wfree() tries to wake"), "003: cover body");
	ok(s->cover && !strstr(s->cover, "2.43.0"), "003: signature cut from the cover");
	is_int(s->n_patches, 2, "003: two patches");
	is_int(s->total, 2, "003: of 2");
	is_str(s->patches[0].subject, "udp: introduce udp specific skb destructor", "003: patch 1 subject");
	is_str(s->patches[1].subject, "udp: optimise write wakeups with SOCK_NOSPACE", "003: patch 2 subject");
	is_str(s->patches[0].author, "Pavel Begunkov", "003: author line");
	is_int(s->patches[0].files, 6, "003: patch 1 touches 6 files");
	is_int(s->patches[0].insertions, 60, "003: patch 1 60 insertions");
	is_int(s->patches[0].deletions, 8, "003: patch 1 8 deletions");
	is_int(s->patches[1].insertions, 17, "003: patch 2 17 insertions");
	is_int(s->patches[1].deletions, 2, "003: patch 2 2 deletions");
	ok(!strstr(s->patches[0].diff, "[RFC 2/2]"), "003: patch 1's diff stops before the next message");
	is_int(s->n_claims, 2, "003: two claims");
	if (s->n_claims == 2) {
		is_int(s->claims[0].patch_seq, 0, "003: cover claim");
		is_str(s->claims[0].metric, "throughput", "003: +5%% to UDP throughput");
		is_double(s->claims[0].lo_pct, 5, 1e-9, "003: 5%%");
		is_int(s->claims[1].patch_seq, 2, "003: patch 2 claim");
		is_str(s->claims[1].metric, "tx_pps", "003: Krps of io_uring sends to a dummy device are packets sent");
		is_str(s->claims[1].direction, "higher", "003: higher");
		is_double(s->claims[1].lo_pct, (2380.0 / 2268 - 1) * 100, 1e-9, "003: +4.94%%");
		is_double(s->claims[1].before, 2268, 1e-9, "003: before 2268");
		is_double(s->claims[1].after, 2380, 1e-9, "003: after 2380");
		is_str(s->claims[1].unit, "Krps", "003: unit");
	}
	is_int(s->n_proposals, 0, "003: no command");
	series_free(s);
}

static void seed004(void)
{
	struct series *s = load("seeds/004_94b9a7569baa50d4.txt", NULL);

	ok(s != NULL, "seed 004 loads");
	if (!s)
		return;
	is_int(s->n_patches, 1, "004: one patch");
	is_int(s->patches[0].seq, 2, "004: it is 2/3");
	is_int(s->total, 3, "004: of 3");
	is_str(s->patches[0].subject, "net: fix napi_consume_skb() with alien skbs", "004: subject");
	is_str(s->patches[0].author, "Eric Dumazet <edumazet@google.com>", "004: author");
	is_str(s->patches[0].diffstat, " net/core/skbuff.c | 5 +++++\n 1 file changed, 5 insertions(+)", "004: diffstat");
	ok(s->notes.n == 1 && strstr(s->notes.v[0], "1/3, 3/3"), "004: incomplete series noted");
	is_int(s->n_claims, 1, "004: one claim (80 -> 120 Mpps and ~50%% merged)");
	if (s->n_claims == 1) {
		is_str(s->claims[0].metric, "tx_pps", "004: tx_pps");
		is_double(s->claims[0].lo_pct, 50, 1e-9, "004: +50%%");
		is_double(s->claims[0].before, 80, 1e-9, "004: 80");
		is_str(s->claims[0].unit, "Mpps", "004: Mpps");
	}
	series_free(s);
}

static void corpus(void)
{
	struct series *s = load("thread-v2.mbox", NULL);

	ok(s != NULL, "thread-v2.mbox loads");
	if (s) {
		is_int(s->version, 2, "v2 wins over v1");
		is_int(s->n_patches, 2, "two v2 patches");
		is_str(s->subject, "foo: make it faster", "cover letter subject");
		is_str(s->patches[0].subject, "foo: first \xc3\xa4\xc3\xb6\xc3\xbc", "patch 1 (sent after 2) ordered first, RFC 2047 subject");
		is_str(s->patches[0].author, "J\xc3\xb6rg M\xc3\xbcller <jm@example.org>", "RFC 2047 Q author");
		is_str(s->patches[0].message_id, "v2-1@example.org", "message id");
		is_int(s->patches[0].files, 2, "base64 body: 2 files");
		is_int(s->patches[0].insertions, 3, "base64 body: 3 insertions");
		ok(strstr(s->patches[1].body, "Caf\xc3\xa9 na\xc3\xafve line that is long enough") != NULL, "QP latin-1 body decoded");
		ok(strstr(s->patches[1].body, "\nFrom the archive") != NULL, "mboxrd >From unescaped");
		ok(strstr(s->patches[1].diff, "x = 3; /* a=b */") != NULL, "QP =3D in the diff decoded");
		ok(trailer(&s->patches[1], "Reviewed-by") && trailer(&s->patches[1], "Tested-by"),
		   "reply via In-Reply-To gives Reviewed-by and Tested-by to patch 2");
		ok(trailer(&s->patches[1], "Reviewed-by") &&
		   !strcmp(trailer(&s->patches[1], "Reviewed-by")->from, "Rita Reviewer <rita@example.org>"),
		   "the trailer records who gave it");
		ok(!trailer(&s->patches[0], "Reviewed-by"), "patch 1 has no Reviewed-by");
		ok(trailer(&s->patches[0], "Acked-by") && trailer(&s->patches[1], "Acked-by"),
		   "an Acked-by on the cover letter goes to every patch");
		ok(!trailer(&s->patches[1], "Signed-off-by") || !trailer(&s->patches[1], "Signed-off-by")->from,
		   "quoted Signed-off-by of the reply is not taken");
		is_int(s->notes.n, 3, "notes: two v1 patches dropped, one unmatched reply");
		is_int(s->n_claims, 2, "cover claims");
		is_str(s->n_claims ? s->claims[0].metric : "", "tx_pps", "Kpps -> tx_pps");
		is_int(s->n_proposals, 1, "UDP_STREAM proposal");
		is_str(s->n_proposals ? s->proposals[0].type : "", "udp_tx", "udp_tx");
		is_str(s->n_proposals ? param(&s->proposals[0], "size") : "", "64", "size from -m");
	}
	series_free(s);

	ok(load("truncated.mbox", NULL) == NULL, "truncated mbox fails");
	ok(load("nodiff.mbox", NULL) == NULL, "a patch without a diff fails");
	ok(load("bad-base64.mbox", NULL) == NULL, "broken base64 fails");
	ok(load("empty.mbox", NULL) == NULL, "empty file fails");
	ok(load("from-only.mbox", NULL) == NULL, "an mbox with only a From_ line fails");
	ok(load("no-such-file", NULL) == NULL, "missing file fails");
	s = load("bad-encoded-word.mbox", NULL);
	ok(s && !strcmp(s->subject, "caf\xc3\xa9 fix and =?X-UNKNOWN?B?Zm9v?= and =?UTF-8?Q?bad=ZZ?="),
	   "broken encoded words kept, good one decoded");
	series_free(s);
}

static void store(void)
{
	char *path = tap_db_path("series.db");
	struct db *db = NULL;
	struct series *s = load("seeds/003_1ddf0ef0bfe7a1c4.txt", NULL), *back = NULL;
	int64_t id = 0, id2 = 0, n = 0;
	int existed = -1;

	ok(db_open(path, &db) == 0, "db opens");
	ok(s && series_store(db, s, &id, &existed, NULL) == 0 && id > 0 && existed == 0, "003 stored");
	ok(s && series_store(db, s, &id2, &existed, NULL) == 0 && id2 == id && existed == 1, "stored again: same id");
	db_get_int(db, &n, "SELECT COUNT(*) FROM patches WHERE series_id = ?", "i", id);
	is_int(n, 2, "two patch rows");
	db_get_int(db, &n, "SELECT COUNT(*) FROM expectations WHERE series_id = ?", "i", id);
	is_int(n, 2, "two expectation rows");
	db_get_int(db, &n, "SELECT COUNT(*) FROM series", "");
	is_int(n, 1, "one series row");
	ok(series_load_db(db, id, &back, NULL) == 0, "loaded back");
	if (back && s) {
		is_str(back->content_sha256, s->content_sha256, "same content hash");
		is_str(back->patches[1].diff, s->patches[1].diff, "same diff");
		is_int(back->patches[0].insertions, 60, "counts from the stored diffstat");
		is_double(back->claims[1].before, 2268, 1e-9, "claim figures stored");
		ok(isnan(back->claims[0].before), "no figures stored as NULL");
		is_int(back->patches[0].n_trailers, 1, "trailers stored");
	}
	series_free(back);
	back = NULL;
	{
		struct buf err = BUF_INIT;

		ok(series_load_db(db, 99999, &back, &err) < 0 && !back, "no such series: refused");
		is_str(err.buf, "no series with id 99999", "the reason handed up, not only logged");
		buf_release(&err);
	}
	series_free(s);
	s = load("seeds/000_951f765891bfd14f.txt", "x");
	ok(s && series_store(db, s, &id2, &existed, NULL) == 0 && id2 != id, "another series gets another id");
	db_get_int(db, &n, "SELECT COUNT(*) FROM proposals WHERE series_id = ?", "i", id2);
	is_int(n, 1, "its proposal row");
	{
		char *params = NULL;

		db_get_str(db, &params, "SELECT params FROM proposals WHERE series_id = ?", "i", id2);
		ok(params && strstr(params, "\"flows\":\"500\""), "params as JSON");
		free(params);
	}
	series_free(s);
	db_close(db);
	free(path);
}

int main(void)
{
	log_init("orch-series", 0, LOG_CRIT);
	seed000();
	seed001();
	seed003();
	seed004();
	corpus();
	store();
	return done_testing();
}
