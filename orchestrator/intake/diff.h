/* diff.h: the diff of a patch mail, every kind git writes (hunks, renames, copies, modes, binary), located and checked. */
#ifndef KLAB_DIFF_H
#define KLAB_DIFF_H

#include <stddef.h>

/* What a diff does to one file: the letters of git's --name-status. */
enum diff_status { DIFF_MODIFIED = 'M', DIFF_ADDED = 'A', DIFF_DELETED = 'D', DIFF_RENAMED = 'R', DIFF_COPIED = 'C' };

enum diff_binary {
	DIFF_TEXT,		/* hunks, or no content change at all */
	DIFF_BINARY_NODATA,	/* "Binary files a/x and b/x differ": nothing git apply can use */
	DIFF_BINARY_DATA,	/* "GIT binary patch": literal or delta data, checked */
};

struct diff_file {
	char *old_path, *new_path;	/* without a/ and b/, unquoted; NULL for /dev/null */
	enum diff_status status;
	unsigned old_mode, new_mode;	/* 0 when not given */
	int similarity;			/* of a rename or copy (%), else -1 */
	enum diff_binary binary;
	long old_size, new_size;	/* binary data: sizes in bytes, -1 unknown */
	int hunks, added, deleted;
	int git;			/* from a "diff --git" header */
	int line;			/* line of the text where it starts */
};

struct diff {
	size_t start, end;		/* byte offsets of the diff in the text */
	size_t msg_end;			/* end of the commit message ("---" line, else the diff start) */
	struct diff_file *files;
	size_t n_files;
	char *error;			/* what is malformed, or NULL */
	char *error_file;		/* the file it is in (NULL: none yet) */
	int error_line;			/* line of the text (1-based) */
};

/*
 * Locate the diff in TEXT (a commit message, "---", diffstat, the diff, a
 * signature) and check it: it starts at the first "diff --git" line, or a
 * "--- x" line followed by "+++ y", and ends after the last thing that is
 * part of it (a hunk's last line, a header, the blank line after binary
 * data). Accepted, as git writes them: hunks (counted against their
 * headers), renames and copies with or without hunks (similarity index,
 * rename/copy from/to), mode changes, new and deleted files (empty ones
 * too), "GIT binary patch" (literal and delta; base85 line lengths and the
 * inflated size checked), "Binary files ... differ", C-quoted names. A
 * combined diff (diff --cc), a truncated hunk or binary block, a header
 * that changes nothing, or a hunk at odds with its file (a new file with
 * old lines) sets d->error with d->error_file and d->error_line.
 * Returns 1 (found; free with diff_free), 0 (no diff in TEXT).
 */
int diff_parse(const char *text, struct diff *d);
void diff_free(struct diff *d);

/*
 * The diffstat and summary of D as git format-patch prints them after
 * "---" (" docs/{old.txt => new.txt} | 0", " blob.bin | Bin 300 -> 200
 * bytes", " N files changed, ...", " create mode 100644 x", " rename
 * ...(100%)", " mode change 100644 => 100755 x"), without a final newline;
 * totals into *files, *ins, *del. Malloc'd.
 */
char *diff_stat(const struct diff *d, int *files, int *ins, int *del);

/* The file's name as git shows it: "x", "dir/{a => b}", C-quoted when it needs it. Malloc'd. */
char *diff_file_display(const struct diff_file *f);

/* 1 when PATH needs C quoting in git's output (control characters, '"', '\\', bytes >= 0x80). */
int diff_path_needs_quote(const char *path);

#endif
