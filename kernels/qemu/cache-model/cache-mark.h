/*
 * cache-mark.h: the bracket of a measured window under klab's cache model.
 *
 * A guest program marks the start and the end of a window by executing one
 * 8-byte x86 no-op, `nopl DISP(%rax,%rax,1)` (0f 1f 84 00 + DISP as a
 * little-endian 32-bit displacement), with DISP = CACHE_MARK_START or
 * CACHE_MARK_STOP. The CPU ignores it (it is a hint no-op on every x86); the
 * plugin (klab-cache.c) recognises its bytes when qemu translates it and
 * snapshots its counters when it executes. Compilers pad with the same
 * instruction but displacement 0, so the two values cannot come from padding.
 */
#ifndef KLAB_CACHE_MARK_H
#define KLAB_CACHE_MARK_H

#define CACHE_MARK_START 0x4b4c4331u	/* "1CLK" little-endian */
#define CACHE_MARK_STOP 0x4b4c4330u	/* "0CLK" */

#if defined(__x86_64__) && !defined(CACHE_MARK_NO_ASM)
/* "memory": the compiler must not move loads or stores across a bracket. */
static inline void cache_mark_start(void)
{
	__asm__ volatile(".byte 0x0f, 0x1f, 0x84, 0x00, 0x31, 0x43, 0x4c, 0x4b" ::: "memory");
}

static inline void cache_mark_stop(void)
{
	__asm__ volatile(".byte 0x0f, 0x1f, 0x84, 0x00, 0x30, 0x43, 0x4c, 0x4b" ::: "memory");
}
#endif

#endif
