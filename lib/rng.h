/* rng.h: a reproducible random stream (xoshiro256** seeded by splitmix64) for the job's ABBA order and the tests. */
#ifndef KLAB_RNG_H
#define KLAB_RNG_H

#include <stdint.h>

/*
 * Not for secrets: the point is that a seed stored with a job gives the
 * same boot order on every machine and in every release, so the stream
 * is fixed by the published algorithms (Blackman and Vigna's xoshiro256**,
 * state filled by Steele et al.'s splitmix64) and must never change.
 */

/* The next value of splitmix64 with state *x (which advances). */
uint64_t splitmix64(uint64_t *x);

/* Seed a xoshiro256** state from one 64-bit seed (four splitmix64 values). */
void xoshiro_seed(uint64_t s[4], uint64_t seed);

/* The next value of xoshiro256** with state s (which advances). */
uint64_t xoshiro_next(uint64_t s[4]);

#endif
