/* compare_fmt.h: a comparison in words and numbers: the one set of formatters that klab compare, the pages and the mail call. */
#ifndef KLAB_COMPARE_FMT_H
#define KLAB_COMPARE_FMT_H

#include "buf.h"
#include "compare/compare.h"

/*
 * Every function appends to `b` and prints "-" for a value that is not
 * known (NaN), so a caller never tests for NaN before printing. The text
 * is plain: the pages escape nothing here because nothing here comes from
 * outside klab, except compare_claim_words() of an unknown stored claim,
 * which the pages pass through html_escape() like any stored string.
 */

/*
 * A p value: "<0.0001" below 0.0001, four decimals below 0.01 (0.0022),
 * else three (0.557). Below 0.0001 the exact value says nothing more to a
 * reader deciding on a change from a handful of boots, and fixed decimals
 * line up in a column where 1.1e-10 and 0.002 do not.
 */
void compare_fmt_p(struct buf *b, double p);
/* A plain number: an integer from 1000 on (2379273), else 4 significant digits (3.084, 0.0001234). */
void compare_fmt_num(struct buf *b, double v);
/* A number with an SI prefix from 10000 on, 4 significant digits: 2.379M, 12.5k, 3.084. */
void compare_fmt_si(struct buf *b, double v);
/* A signed percentage with two decimals: +4.67%. */
void compare_fmt_pct(struct buf *b, double v);
/* An unsigned one, for an MDE or a CI half-width: 0.79%. */
void compare_fmt_mde(struct buf *b, double v);

/* The change of a row: "+4.67%", or "-0.45 pp" for a point difference (unit "pp"). */
void compare_fmt_change(struct buf *b, const struct compare_row *r);
/* Its 95% CI: "[+4.07%, +5.26%]"; nothing at all when the CI is not known. */
void compare_fmt_ci(struct buf *b, const struct compare_row *r);
/* Both, the way a reader meets them: "+4.67% [+4.07%, +5.26%]". */
void compare_fmt_change_ci(struct buf *b, const struct compare_row *r);

/*
 * The verdict in words: "CHANGED (better)", "CHANGED (worse)" or "CHANGED"
 * from the metric's `better`; "EQUIVALENT"; "DESCRIPTIVE"; "INCONCLUSIVE",
 * with the boots per side that would likely settle it: "INCONCLUSIVE(+31)",
 * "INCONCLUSIVE(>100)".
 */
void compare_fmt_verdict(struct buf *b, const struct compare_row *r);

/*
 * A stored claim check in words: "consistent with the claim", "smaller than
 * claimed", "larger than claimed", "opposite to the claim", "not testable at
 * this precision" (stats_claim_check() says when); NULL for no claim; unknown
 * text as it is.
 */
const char *compare_claim_words(const char *claim);
/*
 * The claim check of a row as every output prints it: the words, and for an
 * untestable one the precision the data had: "not testable at this precision
 * (95% CI +-12.34%)". 0 (nothing appended) when the row has no claim check.
 */
int compare_fmt_claim(struct buf *b, const struct compare_row *r);
/*
 * For a row a CPU-cost claim ("saves 10% of cycles") was checked on, which
 * figure stood for cycles: "cycles the PMU counted" (cycles_per_op),
 * "instructions on the icount clock: no run counted cycles" (insn_per_op),
 * "CPU time: no run counted cycles" (cpu_us_per_op). 0 (nothing appended)
 * for any other row, and for a row without a claim check. The page and
 * the mail say it beside every such check.
 */
int compare_fmt_claim_basis(struct buf *b, const struct compare_row *r);
/*
 * A row of klab's cache model (model_*, docs/cache-model.md), labelled as
 * every output shows it: "modeled (klab cache model: l1d 32K/8-way, ...;
 * latencies l2 14, ... cycles)", the sizes and latencies of RES's runs, or
 * "modeled (klab cache model: sizes and latencies not recorded)". 0
 * (nothing appended) for a measured row.
 */
int compare_fmt_modeled(struct buf *b, const struct compare_result *res, const struct compare_row *r);
/* The claimed change of a row: "+4.9%", or "no figure" (a claim without a number is never "nan"). */
void compare_fmt_claim_pct(struct buf *b, const struct compare_row *r);
/*
 * What a claim expects, in words: "higher by 4.94%", "lower by 10% to 20%",
 * "higher by at least 5%", or just the direction when it has no magnitude
 * (NaN lo and hi); magnitudes with three significant digits.
 */
void compare_fmt_claimed(struct buf *b, const char *direction, double lo, double hi);

/*
 * What measured a row's numbers, as a phrase that follows a verdict:
 * "measured in real time (wall-clock rates, per-CPU time)". Every output
 * that gives a verdict says it once per answer line (the job page's answer,
 * the mail's answer, klab compare's headline lines), through this one
 * function: a real-time figure and an instruction-count figure are not
 * the same thing, and a reader must be told which one a verdict rests on.
 */
void compare_fmt_measured_by(struct buf *b, const struct compare_row *r);
/*
 * The noise a row was judged with, when a calibration was found: "noise
 * from 24 A/A boots, 2026-12-07 (sd 20 ppm, 23 df)", or why it was not
 * used ("calibration of 2026-12-07 not used: a boot lies 7.1 calibrated sd
 * from its side's mean; noise from the job's own boots"). 1 when it wrote,
 * 0 for a row without a calibration.
 */
int compare_fmt_noise(struct buf *b, const struct compare_row *r);
/*
 * Under the icount clock "measured by instruction count (icount clock: path
 * length, not hardware throughput)". compare_fmt_clock_note() appends, once
 * per output (klab compare, the page, the mail), what an icount figure
 * means, and returns 1; for real-time results it appends nothing, 0.
 */
int compare_fmt_clock_note(struct buf *b, const struct compare_result *res);

/*
 * The headline row of WORKLOAD in RES: its first metric in reading order
 * (compare_metric_rank(): tps, tx_pps, rx_pps, tx_bps, then cost and
 * latency), NULL when the workload has no row.
 */
const struct compare_row *compare_headline_row(const struct compare_result *res, const char *workload);

/*
 * The headline of a workload on one line, for the mail and klab compare:
 * "tx_pps CHANGED (better) +48.75% [95% CI +46.91%, +50.62%], measured in
 * real time (...)", then for every row of the workload with a claim check
 * "; claim on METRIC (+50.0%): WORDS" (a CPU-cost claim "claim on METRIC
 * (-10.0%, BASIS): WORDS", compare_fmt_claim_basis()), or "; no claim checked".
 */
void compare_fmt_answer(struct buf *b, const struct compare_result *res, const struct compare_row *head);

/* Append the claims of HEAD's workload in words, "claim on tx_pps (+50.0%): consistent with the claim; ..."; 0 when none. */
int compare_fmt_claims(struct buf *b, const struct compare_result *res, const struct compare_row *head);

#endif
