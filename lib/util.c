/* util.c: number parsers, strings, files and folders (allocation is in xalloc.c). */
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "buf.h"
#include "log.h"
#include "util.h"

char *xabspath(const char *path)
{
	char *cwd;
	char *out;

	if (path[0] == '/')
		return xstrdup(path);
	cwd = getcwd(NULL, 0);
	if (!cwd)
		die_errno("cannot get the current folder");
	out = xasprintf("%s/%s", cwd, path);
	free(cwd);
	return out;
}

int run_id_valid(const char *id)
{
	size_t i, n = strlen(id);

	if (!n || n > 128 || id[0] == '.')
		return 0;
	for (i = 0; i < n; i++)
		if (!isalnum((unsigned char)id[i]) && !strchr("._-", id[i]))
			return 0;
	return 1;
}

int starts_with(const char *s, const char *prefix)
{
	return strncmp(s, prefix, strlen(prefix)) == 0;
}

int ends_with(const char *s, const char *suffix)
{
	size_t ls = strlen(s), lx = strlen(suffix);

	return ls >= lx && memcmp(s + ls - lx, suffix, lx) == 0;
}

const char *skip_prefix(const char *s, const char *prefix)
{
	size_t n = strlen(prefix);

	return strncmp(s, prefix, n) == 0 ? s + n : NULL;
}

const char *last_line_except(const char *text, const char *skip)
{
	static char line[512];
	const char *end = text ? text + strlen(text) : NULL;

	line[0] = '\0';
	while (end && end > text) {
		const char *start = end, *e = end;

		while (start > text && start[-1] != '\n')
			start--;
		while (e > start && isspace((unsigned char)e[-1]))
			e--;
		if (e > start && (!skip || !memmem(start, (size_t)(e - start), skip, strlen(skip)))) {
			snprintf(line, sizeof(line), "%.*s", (int)(e - start), start);
			return line;
		}
		end = start > text ? start - 1 : text;
	}
	return line;
}

const char *last_line(const char *text)
{
	return last_line_except(text, NULL);
}

int parse_long(const char *s, long min, long max, long *out)
{
	char *end;
	long v;

	if (!s || !*s || isspace((unsigned char)*s))
		return -1;
	errno = 0;
	v = strtol(s, &end, 0);
	if (errno || *end || v < min || v > max)
		return -1;
	*out = v;
	return 0;
}

int cpu_list_ok(const char *s)
{
	if (!s || !*s)
		return 0;
	for (;;) {
		char *end;
		long a, b;

		if (!isdigit((unsigned char)*s))
			return 0;
		a = b = strtol(s, &end, 10);
		if (*end == '-') {
			if (!isdigit((unsigned char)end[1]))
				return 0;
			b = strtol(end + 1, &end, 10);
		}
		if (a > b || b >= 4096)
			return 0;
		if (!*end)
			return 1;
		if (*end != ',')
			return 0;
		s = end + 1;
	}
}

int parse_u64(const char *s, uint64_t *out)
{
	char *end;
	unsigned long long v;

	if (!s || !*s || !isdigit((unsigned char)*s))
		return -1;
	errno = 0;
	v = strtoull(s, &end, 10);
	if (errno || *end)
		return -1;
	*out = v;
	return 0;
}

int parse_double(const char *s, double *out)
{
	char *end;
	double v;

	if (!s || !*s || isspace((unsigned char)*s))
		return -1;
	errno = 0;
	v = strtod(s, &end);
	if (errno || *end || !isfinite(v))
		return -1;
	*out = v;
	return 0;
}

int parse_bool(const char *s, int *out)
{
	static const char *const yes[] = { "1", "true", "yes", "on" };
	static const char *const no[] = { "0", "false", "no", "off" };
	size_t i;

	if (!s)
		return -1;
	for (i = 0; i < ARRAY_SIZE(yes); i++) {
		if (!strcasecmp(s, yes[i])) {
			*out = 1;
			return 0;
		}
		if (!strcasecmp(s, no[i])) {
			*out = 0;
			return 0;
		}
	}
	return -1;
}

/* A non-negative number followed by a unit from `units` (scale each). */
static int parse_scaled(const char *s, const char *const *units, const double *scale,
			size_t n, double *out)
{
	char *end;
	double v;
	size_t i;

	if (!s || !*s || !(isdigit((unsigned char)*s) || *s == '.'))
		return -1;
	errno = 0;
	v = strtod(s, &end);
	if (errno || !isfinite(v) || v < 0)
		return -1;
	for (i = 0; i < n; i++) {
		if (!strcmp(end, units[i])) {
			*out = v * scale[i];
			return 0;
		}
	}
	return -1;
}

int parse_duration_ms(const char *s, long *out_ms)
{
	static const char *const units[] = { "", "s", "ms", "m", "min", "h", "d" };
	static const double scale[] = { 1000, 1000, 1, 60000, 60000, 3600000, 86400000 };
	double v;

	if (parse_scaled(s, units, scale, ARRAY_SIZE(units), &v) || v > (double)LONG_MAX / 2)
		return -1;
	*out_ms = (long)(v + 0.5);
	return 0;
}

int parse_size(const char *s, uint64_t *out)
{
	static const char *const units[] = { "", "k", "K", "M", "G", "T" };
	static const double scale[] = { 1, 1024.0, 1024.0, 1048576.0, 1073741824.0, 1099511627776.0 };
	double v;

	if (parse_scaled(s, units, scale, ARRAY_SIZE(units), &v) || v > 1.8e19)
		return -1;
	*out = (uint64_t)v;
	return 0;
}

int64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

double now_wall(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

int mkdir_p(const char *path)
{
	char *p = xstrdup(path), *s;
	int ret = 0;

	for (s = p + 1; ; s++) {
		if (*s == '/' || *s == '\0') {
			char c = *s;

			*s = '\0';
			if (mkdir(p, 0755) && errno != EEXIST) {
				ret = error_errno("cannot create folder '%s'", p);
				break;
			}
			*s = c;
			if (!c)
				break;
		}
	}
	if (!ret) {
		struct stat st;

		if (stat(path, &st) || !S_ISDIR(st.st_mode))
			ret = error("cannot create folder '%s': not a folder", path);
	}
	free(p);
	return ret;
}

static int remove_at(int dirfd, const char *name, const char *shown)
{
	struct stat st;

	if (fstatat(dirfd, name, &st, AT_SYMLINK_NOFOLLOW)) {
		if (errno == ENOENT)
			return 0;
		return error_errno("cannot remove '%s'", shown);
	}
	if (S_ISDIR(st.st_mode)) {
		int fd = openat(dirfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		DIR *d;
		struct dirent *e;
		int ret = 0;

		if (fd < 0)
			return error_errno("cannot open folder '%s'", shown);
		d = fdopendir(fd);
		if (!d) {
			close(fd);
			return error_errno("cannot open folder '%s'", shown);
		}
		while ((e = readdir(d))) {
			if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
				continue;
			if (remove_at(fd, e->d_name, shown))
				ret = -1;
		}
		closedir(d);
		if (ret)
			return ret;
		if (unlinkat(dirfd, name, AT_REMOVEDIR))
			return error_errno("cannot remove folder '%s'", shown);
		return 0;
	}
	if (unlinkat(dirfd, name, 0))
		return error_errno("cannot remove '%s'", shown);
	return 0;
}

int remove_tree(const char *path)
{
	return remove_at(AT_FDCWD, path, path);
}

int write_all(int fd, const void *data, size_t len)
{
	const char *p = data;

	while (len) {
		ssize_t n = write(fd, p, len);

		if (n < 0) {
			if (errno == EINTR)
				continue;
			return -1;
		}
		p += n;
		len -= (size_t)n;
	}
	return 0;
}

int write_file_atomic(const char *path, const void *data, size_t len, mode_t mode)
{
	char *tmp = xasprintf("%s.tmp.%ld", path, (long)getpid());
	char *dir = xstrdup(path), *slash;
	int fd, ret = -1;

	fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, mode);
	if (fd < 0) {
		error_errno("cannot write '%s'", tmp);
		goto out;
	}
	if (write_all(fd, data, len) || fsync(fd)) {
		error("cannot write '%s': %s%s", tmp, strerror(errno),
		      errno == ENOSPC ? " (the old file is kept)" : "");
		close(fd);
		unlink(tmp);
		goto out;
	}
	if (close(fd)) {
		error_errno("cannot write '%s'", tmp);
		unlink(tmp);
		goto out;
	}
	if (rename(tmp, path)) {
		error_errno("cannot rename '%s' to '%s'", tmp, path);
		unlink(tmp);
		goto out;
	}
	slash = strrchr(dir, '/');
	if (slash) {
		*slash = '\0';
		fd = open(*dir ? dir : "/", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	} else {
		fd = open(".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	}
	if (fd >= 0) {
		fsync(fd);
		close(fd);
	}
	ret = 0;
out:
	free(tmp);
	free(dir);
	return ret;
}

int copy_file(const char *from, const char *to, mode_t mode)
{
	struct buf b = BUF_INIT;
	int ret = buf_read_file(&b, from);

	if (ret == 0)
		ret = write_file_atomic(to, b.buf, b.len, mode);
	buf_release(&b);
	return ret;
}

int file_exists(const char *path)
{
	return access(path, F_OK) == 0;
}
