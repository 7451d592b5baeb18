/* util.h: allocation that aborts on failure, small string and file helpers. */
#ifndef KLAB_UTIL_H
#define KLAB_UTIL_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#define KLAB_PRINTF(f, a) __attribute__((format(printf, f, a)))
#define KLAB_NORETURN __attribute__((noreturn))
#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))
/* The struct of type `type` whose member `member` is at `ptr`. */
#define container_of(ptr, type, member) ((type *)(void *)((char *)(ptr) - offsetof(type, member)))

#define KLAB_VERSION "0.1.0"

/* Allocation failure aborts with a message: no caller handles NULL. */
void *xmalloc(size_t n);
void *xcalloc(size_t n, size_t size);
void *xrealloc(void *p, size_t n);
char *xstrdup(const char *s);
char *xstrndup(const char *s, size_t n);
char *xasprintf(const char *fmt, ...) KLAB_PRINTF(1, 2);
/* PATH made absolute against the current folder (not resolved: no symlinks followed). */
char *xabspath(const char *path);

/*
 * A run id as the agent uses it for a file name: 1-128 bytes of letters,
 * digits, '.', '_' and '-', not starting with '.'. Shared by the agent (which
 * names result files by it) and the orchestrator (which stores it as the
 * unique run uid), so both refuse the same ids.
 */
int run_id_valid(const char *id);

/*
 * `klab-agent fetch` and `klab-agent run`'s exit status when run RUN_ID is
 * being run now (its run lock is held): no result yet, and none may be
 * started again. Both sides of the SSH call use it.
 */
#define AGENT_EXIT_RUNNING 3

int starts_with(const char *s, const char *prefix);
int ends_with(const char *s, const char *suffix);
/* Pointer past `prefix` when s starts with it, else NULL. */
const char *skip_prefix(const char *s, const char *prefix);

/*
 * The last line of TEXT that holds more than white space, with the white
 * space at its end cut and at most 511 bytes of it, for messages
 * ("cannot unpack 'x': LINE"). In a static buffer that the next call
 * overwrites; "" when there is no such line (or TEXT is NULL).
 * last_line_except() passes over the lines that contain SKIP.
 */
const char *last_line(const char *text);
const char *last_line_except(const char *text, const char *skip);

/*
 * Strict number parsers: the whole string must be a number within
 * [min, max]. Return 0, or -1 (nothing logged: the caller names the field).
 */
int parse_long(const char *s, long min, long max, long *out);
int parse_u64(const char *s, uint64_t *out);
int parse_double(const char *s, double *out);
/*
 * A CPU list as the kernel writes one ("1", "0-3,8"): comma-separated CPU
 * numbers (below 4096) or ranges N-M with N <= M. 1 when S is one, else 0.
 */
int cpu_list_ok(const char *s);
/* "1", "true", "yes", "on" / "0", "false", "no", "off". */
int parse_bool(const char *s, int *out);
/* A duration: "30", "30s", "500ms", "5m", "2h" -> milliseconds. */
int parse_duration_ms(const char *s, long *out_ms);
/* A size: "512", "16k", "4M", "1G" (powers of 1024) -> bytes. */
int parse_size(const char *s, uint64_t *out);

/* Milliseconds of CLOCK_MONOTONIC; wall clock seconds (CLOCK_REALTIME). */
int64_t now_ms(void);
double now_wall(void);

/* mkdir -p with mode 0755: 0 or -1 (logged). */
int mkdir_p(const char *path);
/* rm -rf of a path (no symlinks followed): 0 or -1 (logged). */
int remove_tree(const char *path);
/*
 * Write a file atomically: write PATH.tmp.PID, fsync, rename over PATH,
 * fsync the folder. 0 or -1 (logged; a full disk is reported as such and
 * the old file is left untouched).
 */
int write_file_atomic(const char *path, const void *data, size_t len, mode_t mode);
/* Copy the file FROM to TO with write_file_atomic() (mode MODE): 0 or -1 (logged). */
int copy_file(const char *from, const char *to, mode_t mode);
/* write() all of it, retrying on EINTR and short writes: 0 or -1. */
int write_all(int fd, const void *data, size_t len);
int file_exists(const char *path);

/*
 * SHA-256 (FIPS 180-4). Two implementations sit behind these calls: the
 * orchestrator links lib/sha256_evp.c (OpenSSL's EVP), klab-agent links
 * the portable lib/sha256.c (uses the x86 SHA extensions when the CPU has
 * them; KLAB_SHA256_PORTABLE=1 forces the plain C), so the copied program
 * needs no libcrypto. lib/sha256_hex.c holds the helpers over either.
 */
/* Hex digest of memory (65 bytes with the NUL). */
void sha256_hex(const void *data, size_t len, char hex[65]);
/* 32 digest bytes -> 64 hex digits and a NUL. */
void sha256_to_hex(const unsigned char d[32], char hex[65]);
/* Hex digest of a file: 0 or -1 (logged). */
int sha256_file_hex(const char *path, char hex[65]);

/* An incremental digest: init, update..., final (which every init must reach: it frees the EVP state). */
struct sha256_ctx {
	uint32_t h[8];		/* sha256.c's state */
	uint64_t total;
	unsigned char block[64];
	size_t used;
	void *evp;		/* sha256_evp.c's: an EVP_MD_CTX */
};
void sha256_init(struct sha256_ctx *c);
void sha256_update(struct sha256_ctx *c, const void *data, size_t len);
void sha256_final(struct sha256_ctx *c, unsigned char out[32]);

#endif
