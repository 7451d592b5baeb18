/* lib-util.c: number parsers, SHA-256 against known vectors, atomic writes, folders, logging, JSON helpers. */
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "buf.h"
#include "jsonh.h"
#include "log.h"
#include "run.h"
#include "tap.h"

static void test_parsers(void)
{
	long l;
	uint64_t u;
	double d;
	int b;

	ok(!parse_long("42", 0, 100, &l) && l == 42, "parse_long");
	ok(parse_long("42x", 0, 100, &l), "trailing garbage refused");
	ok(parse_long("101", 0, 100, &l), "out of range refused");
	ok(parse_long("", 0, 100, &l), "empty refused");
	ok(parse_long(" 4", 0, 100, &l), "leading space refused");
	ok(cpu_list_ok("1") && cpu_list_ok("0-3,8") && cpu_list_ok("0,2-2,4095"), "cpu lists the kernel writes");
	ok(!cpu_list_ok("") && !cpu_list_ok("1,") && !cpu_list_ok(",1") && !cpu_list_ok("3-1") &&
	   !cpu_list_ok("1-") && !cpu_list_ok("4096") && !cpu_list_ok("1 2") && !cpu_list_ok("-1") &&
	   !cpu_list_ok("a"), "bad cpu lists refused (empty, dangling comma or dash, reversed, too large, space)");
	ok(!parse_long("-5", -10, 10, &l) && l == -5, "negative in range");
	ok(!parse_u64("18446744073709551615", &u) && u == UINT64_MAX, "u64 max");
	ok(parse_u64("18446744073709551616", &u), "u64 overflow refused");
	ok(parse_u64("-1", &u), "negative u64 refused");
	ok(!parse_double("2.5e3", &d) && d == 2500, "double");
	ok(parse_double("nan", &d), "nan refused");
	ok(!parse_bool("Yes", &b) && b == 1 && !parse_bool("off", &b) && b == 0, "booleans");
	ok(parse_bool("maybe", &b), "bad boolean refused");
	ok(!parse_duration_ms("30", &l) && l == 30000, "bare seconds");
	ok(!parse_duration_ms("500ms", &l) && l == 500, "milliseconds");
	ok(!parse_duration_ms("1.5s", &l) && l == 1500, "fractional seconds");
	ok(!parse_duration_ms("5m", &l) && l == 300000, "minutes");
	ok(!parse_duration_ms("2h", &l) && l == 7200000, "hours");
	ok(parse_duration_ms("5 m", &l) && parse_duration_ms("-1s", &l) && parse_duration_ms("s", &l),
	   "bad durations refused");
	ok(!parse_size("16k", &u) && u == 16384 && !parse_size("4M", &u) && u == 4194304, "sizes");
	ok(parse_size("4X", &u), "bad size unit refused");
	ok(starts_with("kexec", "kex") && !starts_with("ke", "kex"), "starts_with");
	ok(ends_with("a.sql", ".sql") && !ends_with("sql", ".sql"), "ends_with");
	is_str(skip_prefix("sysctl.net.core", "sysctl."), "net.core", "skip_prefix");
}

static void test_sha256(void)
{
	char hex[65];
	struct sha256_ctx c;
	unsigned char d[32];
	char *mil = xmalloc(1000000);

	/* FIPS 180-4 example vectors */
	sha256_hex("", 0, hex);
	is_str(hex, "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855", "sha256 of ''");
	sha256_hex("abc", 3, hex);
	is_str(hex, "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad", "sha256 of 'abc'");
	sha256_hex("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq", 56, hex);
	is_str(hex, "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1", "sha256 of the 448-bit vector");
	memset(mil, 'a', 1000000);
	sha256_init(&c);
	for (int i = 0; i < 1000; i++)
		sha256_update(&c, mil + i * 1000, 1000);
	sha256_final(&c, d);
	ok(d[0] == 0xcd && d[1] == 0xc7 && d[31] == 0xd0, "sha256 of a million 'a' in pieces");
	free(mil);
	{
		char *p = xasprintf("%s/h", tap_scratch_dir());

		ok(!write_file_atomic(p, "abc", 3, 0644), "atomic write");
		ok(!sha256_file_hex(p, hex) && !strcmp(hex, "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"),
		   "sha256 of a file");
		ok(!write_file_atomic(p, "xyz", 3, 0600), "atomic overwrite");
		{
			struct buf b = BUF_INIT;

			ok(!buf_read_file(&b, p) && !strcmp(b.buf, "xyz"), "the new content replaced the old");
			buf_release(&b);
		}
		ok(write_file_atomic("/nonexistent-dir/x", "a", 1, 0644) == -1, "atomic write into a missing folder fails");
		free(p);
	}
}

/* Odd sizes and piece lengths against coreutils' sha256sum (both the SHA-NI
 * and the portable path: run with KLAB_SHA256_PORTABLE=1 for the latter). */
static void test_sha256_vs_coreutils(void)
{
	static const size_t sizes[] = { 0, 1, 55, 56, 63, 64, 65, 127, 128, 1000003 };
	unsigned char *data = xmalloc(1000003);
	uint32_t x = 12345;

	for (size_t i = 0; i < 1000003; i++) {
		x = x * 1103515245u + 12345u;
		data[i] = (unsigned char)(x >> 16);
	}
	for (size_t k = 0; k < ARRAY_SIZE(sizes); k++) {
		char *p = xasprintf("%s/s%zu", tap_scratch_dir(), sizes[k]);
		const char *argv[] = { "sha256sum", p, NULL };
		struct run_cmd c = RUN_CMD_INIT;
		struct sha256_ctx ctx;
		unsigned char d[32];
		char file_hex[65], piece_hex[65];
		size_t off = 0, step = 1;

		write_file_atomic(p, data, sizes[k], 0644);
		c.argv = argv;
		sha256_file_hex(p, file_hex);
		sha256_init(&ctx);
		while (off < sizes[k]) {	/* pieces of 1, 2, 3, ... bytes */
			size_t n = sizes[k] - off < step ? sizes[k] - off : step;

			sha256_update(&ctx, data + off, n);
			off += n;
			step = step * 3 % 1000 + 1;
		}
		sha256_final(&ctx, d);
		sha256_to_hex(d, piece_hex);
		ok(!run_command(&c) && c.status == 0 && !strncmp(c.out.buf, file_hex, 64) &&
		   !strcmp(file_hex, piece_hex), "sha256 of %zu bytes agrees with sha256sum, whole and in pieces",
		   sizes[k]);
		run_release(&c);
		free(p);
	}
	free(data);
}

static void test_dirs(void)
{
	char *d = xasprintf("%s/a/b/c", tap_scratch_dir());
	char *f = xasprintf("%s/a/b/c/file", tap_scratch_dir());
	char *top = xasprintf("%s/a", tap_scratch_dir());
	struct stat st;

	ok(!mkdir_p(d) && !stat(d, &st) && S_ISDIR(st.st_mode), "mkdir_p makes nested folders");
	ok(!mkdir_p(d), "mkdir_p of an existing folder is fine");
	ok(!write_file_atomic(f, "x", 1, 0644), "a file inside");
	ok(mkdir_p(f) == -1, "mkdir_p over a file fails");
	ok(!remove_tree(top) && !file_exists(top), "remove_tree removes it all");
	ok(!remove_tree(top), "remove_tree of a missing path is fine");
	free(d);
	free(f);
	free(top);
}

static void test_log(void)
{
	ok(log_level_parse("debug") == LOG_DEBUG && log_level_parse("Warning") == LOG_WARNING,
	   "level names");
	is_int(log_level_parse("loud"), -1, "unknown level");
	is_str(log_level_name(LOG_INFO), "info", "level name");
	is_int(error("test error %d", 1), -1, "error() returns -1");
}

static void test_json(void)
{
	struct json_object *o;
	const char *s = NULL;
	int64_t i = 0;
	double d = 0;

	{
		const char *doc = "{\"a\": \"x\", \"n\": 3, \"f\": 2.5}";

		o = json_parse(doc, strlen(doc), "test");
	}
	ok(o != NULL, "parse an object");
	ok(!json_get_str(o, "a", &s, "test") && !strcmp(s, "x"), "get a string");
	ok(!json_get_int(o, "n", &i, "test") && i == 3, "get an int");
	ok(!json_get_double(o, "n", &d, "test") && d == 3, "an int is a double too");
	ok(!json_get_double(o, "f", &d, "test") && d == 2.5, "get a double");
	is_int(json_get_int(o, "missing", &i, "test"), 1, "a missing key is 1");
	is_int(json_get_int(o, "a", &i, "test"), -1, "a wrong type is -1");
	json_object_put(o);
	ok(json_parse("{\"a\": 1", 7, "truncated") == NULL, "truncated JSON refused");
	ok(json_parse("{\"a\": 1} x", 10, "trailing") == NULL, "trailing data refused");
	ok(json_parse("{\"a\": tru}", 10, "bad") == NULL, "bad literal refused");
	ok(json_parse("", 0, "empty") == NULL, "empty document refused");
	ok(json_parse("[1,\0]", 5, "nul") == NULL, "NUL byte refused");
}

int main(void)
{
	log_init("lib-util", 0, LOG_CRIT);
	test_parsers();
	test_sha256();
	test_sha256_vs_coreutils();
	test_dirs();
	test_log();
	test_json();
	return done_testing();
}
