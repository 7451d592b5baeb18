/* orch-diff.c: unit tests of the diff parser on git format-patch output (tests/data/patches) and on broken diffs. */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "buf.h"
#include "intake/diff.h"
#include "log.h"
#include "intake/series.h"
#include "tap.h"
#include "util.h"

/* The diffstat git wrote into a format-patch file: the lines after "---" up to the blank line. */
static char *git_diffstat(const char *mail)
{
	const char *p = strstr(mail, "\n---\n"), *e;

	if (!p)
		return NULL;
	p += 5;
	e = strstr(p, "\n\n");
	return e ? xstrndup(p, e - p) : NULL;
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Every fixture git made loads, and our diffstat is the one git printed above the diff. */
static void fixtures(void)
{
	char *dir = xasprintf("%s/patches", tap_data_dir());
	DIR *d = opendir(dir);
	struct dirent *e;
	char *names[64];
	size_t n = 0;

	ok(d != NULL, "tests/data/patches opens");
	while (d && (e = readdir(d)) && n < 64)
		if (ends_with(e->d_name, ".patch") && !starts_with(e->d_name, "0000-"))
			names[n++] = xstrdup(e->d_name);
	if (d)
		closedir(d);
	qsort(names, n, sizeof(*names), cmp_str);
	is_int(n, 13, "13 format-patch files besides the cover letter");
	for (size_t i = 0; i < n; i++) {
		char *path = xasprintf("%s/%s", dir, names[i]);
		struct buf text = BUF_INIT;
		struct series *s = NULL;
		char *want;

		buf_read_file(&text, path);
		want = git_diffstat(text.buf);
		ok(series_load(path, NULL, &s) == 0 && s->n_patches == 1, "%s loads", names[i]);
		if (s && s->n_patches == 1) {
			/* --no-binary: git knew the sizes, the patch does not say them */
			if (starts_with(names[i], "0101-"))
				is_str(s->patches[0].diffstat,
				       " blob.bin     | Bin\n src/logo.bin | Bin\n 2 files changed, 0 insertions(+), 0 deletions(-)\n"
				       " create mode 100644 src/logo.bin", "%s: diffstat without the sizes", names[i]);
			else
				is_str(s->patches[0].diffstat, want, "%s: diffstat as git printed it", names[i]);
			ok(ends_with(s->patches[0].diff, "\n") && !strstr(s->patches[0].diff, "\n-- \n"),
			   "%s: the diff ends before the signature", names[i]);
		}
		series_free(s);
		free(want);
		buf_release(&text);
		free(path);
		free(names[i]);
	}
	free(dir);
}

static void parse_ok(const char *text, struct diff *d, const char *what)
{
	int r = diff_parse(text, d);

	ok(r == 1 && !d->error, "%s parses%s%s", what, d->error ? ": " : "", d->error ? d->error : "");
}

static void kinds(void)
{
	struct diff d;
	char *st;
	int f, a, r;
	const char *ren = "msg\n---\ndiff --git a/x b/y\nsimilarity index 100%\nrename from x\nrename to y\n-- \n2.39\n";

	parse_ok(ren, &d, "a pure rename");
	is_int(d.n_files, 1, "rename: one file");
	if (d.n_files) {
		is_int(d.files[0].status, DIFF_RENAMED, "rename: R");
		is_str(d.files[0].old_path, "x", "rename: from x");
		is_str(d.files[0].new_path, "y", "rename: to y");
		is_int(d.files[0].similarity, 100, "rename: 100%%");
		is_int(d.files[0].hunks, 0, "rename: no hunk");
	}
	is_int(d.msg_end, 4, "the message ends at ---");
	st = xstrndup(ren + d.start, d.end - d.start);
	is_str(st, "diff --git a/x b/y\nsimilarity index 100%\nrename from x\nrename to y\n", "rename: the diff is its header");
	free(st);
	diff_free(&d);

	parse_ok("diff --git a/run.sh b/run.sh\nold mode 100644\nnew mode 100755\n", &d, "a mode change");
	ok(d.n_files == 1 && d.files[0].old_mode == 0100644 && d.files[0].new_mode == 0100755 &&
	   d.files[0].status == DIFF_MODIFIED, "mode change: 100644 => 100755, M");
	st = diff_stat(&d, &f, &a, &r);
	is_str(st, " run.sh | 0\n 1 file changed, 0 insertions(+), 0 deletions(-)\n mode change 100644 => 100755 run.sh",
	       "mode change: diffstat and summary");
	free(st);
	diff_free(&d);

	parse_ok("diff --git a/e b/e\nnew file mode 100644\nindex 0000000..e69de29\n", &d, "a new empty file");
	ok(d.n_files == 1 && d.files[0].status == DIFF_ADDED && !d.files[0].old_path &&
	   !strcmp(d.files[0].new_path, "e"), "new empty file: A, no old path");
	diff_free(&d);

	parse_ok("diff --git a/g b/g\ndeleted file mode 100644\nindex e69de29..0000000\n", &d, "a deleted empty file");
	ok(d.n_files == 1 && d.files[0].status == DIFF_DELETED && !d.files[0].new_path, "deleted empty file: D");
	diff_free(&d);

	parse_ok("diff --git \"a/t\\tab\" \"b/t\\tab\"\nindex 1..2 100644\n--- \"a/t\\tab\"\n+++ \"b/t\\tab\"\n"
		 "@@ -1 +1 @@\n-a\n+b\n", &d, "quoted names");
	ok(d.n_files == 1 && !strcmp(d.files[0].new_path, "t\tab"), "quoted name unquoted");
	st = d.n_files ? diff_file_display(&d.files[0]) : xstrdup("");
	is_str(st, "\"t\\tab\"", "quoted again for display");
	free(st);
	diff_free(&d);

	parse_ok("diff --git a/my notes.txt b/my notes.txt\nindex 1..2 100644\n--- a/my notes.txt\n+++ b/my notes.txt\n"
		 "@@ -1,2 +1,2 @@\n a\n-b\n+c\n\\ No newline at end of file\ndiff --git a/z b/z\nold mode 100644\n"
		 "new mode 100755\n", &d, "a name with a space, no newline at the end, a second file");
	ok(d.n_files == 2 && !strcmp(d.files[0].new_path, "my notes.txt") && d.files[0].added == 1 &&
	   d.files[0].deleted == 1, "space in the name; one line each way");
	diff_free(&d);

	parse_ok("diff --git a/a/b.c b/a/c.c\nsimilarity index 90%\nrename from a/b.c\nrename to a/c.c\n"
		 "old mode 100644\nnew mode 100755\n", &d, "a rename with a mode change");
	st = diff_stat(&d, &f, &a, &r);
	is_str(st, " a/{b.c => c.c} | 0\n 1 file changed, 0 insertions(+), 0 deletions(-)\n rename a/{b.c => c.c} (90%)\n"
	       " mode change 100644 => 100755", "rename and mode change: git's summary lines");
	free(st);
	diff_free(&d);

	parse_ok("--- a/old.c\t2026-01-01\n+++ b/old.c\t2026-01-02\n@@ -1 +1 @@\n-x\n+y\n--- a/two.c\n+++ b/two.c\n"
		 "@@ -0,0 +1 @@\n+z\n", &d, "a traditional two-file diff");
	ok(d.n_files == 2 && !strcmp(d.files[0].new_path, "old.c") && !strcmp(d.files[1].new_path, "two.c"),
	   "traditional diff: two files, dates cut");
	diff_free(&d);

	ok(diff_parse("just a message\n-- \nsig\n", &d) == 0, "no diff: 0");
	diff_free(&d);
}

/* A broken diff: the error, the file it names and the line. */
static void broken(const char *text, const char *err, const char *file, int line, const char *what)
{
	struct diff d = { 0 };

	ok(diff_parse(text, &d) == 1 && d.error && strstr(d.error, err), "%s: '%s' (got '%s')", what, err,
	   d.error ? d.error : "no error");
	is_str(d.error_file, file, "%s: names the file", what);
	is_int(d.error_line, line, "%s: line %d", what, line);
	diff_free(&d);
}

static void errors(void)
{
	broken("m\n---\ndiff --git a/x b/x\n--- a/x\n+++ b/x\n@@ -1,3 +1,3 @@\n a\n-b\n+c\nsig\n", "ends early at 'sig'",
	       "x", 10, "a truncated hunk");
	broken("diff --git a/x b/x\n--- a/x\n+++ b/x\n@@ -1,3 +1,3 @@\n a\n", "is truncated: 2 old and 2 new lines missing",
	       "x", 4, "a hunk cut at the end of the text");
	broken("diff --git a/x b/x\ndiff --git a/y b/y\nnew file mode 100644\n", "changes nothing", "x", 1,
	       "a header without anything");
	broken("diff --git a/x b/x\n--- a/x\n+++ b/x\ndiff --git a/y b/y\nold mode 100644\nnew mode 100755\n",
	       "'---'/'+++' lines without a hunk", "x", 1, "---/+++ without a hunk");
	broken("diff --git a/x b/x\n--- a/x\n+++ b/x\n@@ -1 +1 @ x\n-a\n+b\n", "malformed hunk header", "x", 4,
	       "a malformed hunk header");
	broken("diff --git a/x b/x\nold mode 10064x\nnew mode 100755\n", "bad mode", "x", 2, "a bad mode");
	broken("diff --git a/n b/n\nnew file mode 100644\n--- /dev/null\n+++ b/n\n@@ -1 +1 @@\n-a\n+b\n",
	       "has old lines in a new file", "n", 5, "a new file with old lines");
	broken("diff --git a/b b/b\nnew file mode 100644\nindex 0000000..c72c47c\nGIT binary patch\nliteral 7\n"
	       "OcmZQzWD4+e{|^8I&H?BE\n", "no blank line ends it", "b", 5, "binary data without its blank line");
	broken("diff --git a/b b/b\nnew file mode 100644\nindex 0000000..c72c47c\nGIT binary patch\nliteral 7\n"
	       "OcmZQzWD4+e{|^8I&H?B\n\n", "does not match its length letter", "b", 6, "a cut binary data line");
	broken("diff --git a/b b/b\nnew file mode 100644\nindex 0000000..c72c47c\nGIT binary patch\nliteral 8\n"
	       "OcmZQzWD4+e{|^8I&H?BE\n\n", "does not inflate to 8 bytes", "b", 5, "binary data of another size");
	broken("diff --git a/b b/b\nnew file mode 100644\nindex 0000000..c72c47c\nGIT binary patch\nliteral 7\n"
	       "OcmZQzWD4+e{|^8I&H\"BE\n\n", "not base85", "b", 6, "a character that is not base85");
	broken("diff --git a/r b/s\nsimilarity index 100%\nrename from r\n", "rename without both", "r => s", 1,
	       "a rename without its 'to' line");
	broken("diff --git a/r b/s\nsimilarity index 200%\nrename from r\nrename to s\n", "bad percentage", "s", 2,
	       "a similarity over 100%");
	broken("diff --cc x\nindex 1,2..3\n", "a combined diff", NULL, 1, "a combined diff");
	broken("diff --git \"a/x b/x\n", "cannot read the names", NULL, 1, "an unterminated quoted name");
}

/* Errors of series intake name the file of the diff and the line of the mail. */
static void mail_lines(void)
{
	const char *mail = "From 0 Mon Sep 17 00:00:00 2001\nFrom: T <t@e>\nSubject: [PATCH] cut\n\nbody\n---\n"
			   " x | 2 +-\n\ndiff --git a/x b/x\n--- a/x\n+++ b/x\n@@ -1,3 +1,3 @@\n a\n-b\n+c\n-- \n2.39\n";
	const char *qp = "From: T <t@e>\nSubject: [PATCH] cut\nContent-Transfer-Encoding: quoted-printable\n\nbody\n"
			 "diff --git a/x b/x\n--- a/x\n+++ b/x\n@@ -1,3 +1,3 @@\n a\n-b=\n\n+c\n";
	const char *hunkless = "From 0 Mon Sep 17 00:00:00 2001\nFrom: T <t@e>\nSubject: [PATCH] mode\n\nbody\n---\n"
			       "diff --git a/run.sh b/run.sh\nold mode 100644\nnew mode 100755\n-- \n2.39\n";
	struct series *s = NULL;

	log_clear_error();
	ok(series_parse(mail, strlen(mail), "'m.mbox'", "m", NULL, &s) < 0, "a truncated hunk fails");
	is_str(log_last_error(), "'m.mbox':17: '[PATCH] cut' (line 1): x: hunk 1 (@@ -1,3 +1,3 @@) ends early at '2.39':"
	       " 0 old and 1 new lines missing",
	       "the error names the file and the line of the mail (the signature's '-- ' reads as a removed line)");
	log_clear_error();
	ok(series_parse(qp, strlen(qp), "'q.eml'", "q", NULL, &s) < 0, "a truncated hunk in a QP body fails");
	is_str(log_last_error(), "'q.eml': '[PATCH] cut' (line 1), line 5 of its decoded body: x: hunk 1"
	       " (@@ -1,3 +1,3 @@) is truncated: 1 old and 1 new lines missing",
	       "a decoded body: the line of the body");
	ok(series_parse(hunkless, strlen(hunkless), "'h.mbox'", "h", NULL, &s) == 0 && s->n_patches == 1,
	   "a diff without a hunk (mode change) is a patch");
	ok(s && s->n_patches == 1 && ends_with(s->patches[0].diff, "new mode 100755\n"), "its diff is the header");
	series_free(s);
}

int main(void)
{
	log_init("orch-diff", 0, LOG_CRIT);
	fixtures();
	kinds();
	errors();
	mail_lines();
	return done_testing();
}
