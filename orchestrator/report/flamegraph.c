/* flamegraph.c: the differential flame graph of the report pages: folded stacks into a frame tree, the tree into SVG. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "buf.h"
#include "report/flamegraph.h"
#include "report/html.h"
#include "strvec.h"
#include "util.h"

#define FRAME_H 17		/* px per stack level */
#define TOP_H 58		/* title and legend */
#define MARGIN 10
#define CHAR_W 6.6		/* px per character of the 11 px monospace labels */
#define MIN_PX 0.5		/* narrower frames are left out */
#define VANISHED_MAX 5

struct fnode {
	char *name;
	double a, b;		/* inclusive shares of A's and B's samples */
	struct fnode *kid;
	size_t n_kid, a_kid;
};

/* The child of P called NAME (LEN bytes), made when missing. */
static struct fnode *child(struct fnode *p, const char *name, size_t len)
{
	struct fnode *k;

	for (size_t i = 0; i < p->n_kid; i++)
		if (strlen(p->kid[i].name) == len && !memcmp(p->kid[i].name, name, len))
			return &p->kid[i];
	if (p->n_kid == p->a_kid) {
		p->a_kid = p->a_kid ? 2 * p->a_kid : 4;
		p->kid = xrealloc(p->kid, p->a_kid * sizeof(*p->kid));
	}
	k = &p->kid[p->n_kid++];
	memset(k, 0, sizeof(*k));
	k->name = xstrndup(name, len);
	return k;
}

static void tree_add(struct fnode *root, const struct flame_stack *s)
{
	const char *p = s->stack;
	struct fnode *cur = root;
	double a = isfinite(s->a) && s->a > 0 ? s->a : 0, b = isfinite(s->b) && s->b > 0 ? s->b : 0;

	root->a += a;
	root->b += b;
	while (*p) {
		const char *e = strchr(p, ';');
		size_t len = e ? (size_t)(e - p) : strlen(p);

		if (len) {
			cur = child(cur, p, len);
			cur->a += a;
			cur->b += b;
		}
		p += len + (e ? 1 : 0);
	}
}

static int name_cmp(const void *x, const void *y)
{
	return strcmp(((const struct fnode *)x)->name, ((const struct fnode *)y)->name);
}

static void tree_sort(struct fnode *n)
{
	if (n->n_kid > 1)
		qsort(n->kid, n->n_kid, sizeof(*n->kid), name_cmp);
	for (size_t i = 0; i < n->n_kid; i++)
		tree_sort(&n->kid[i]);
}

static void tree_free(struct fnode *n)
{
	for (size_t i = 0; i < n->n_kid; i++)
		tree_free(&n->kid[i]);
	free(n->kid);
	free(n->name);
}

/* What one drawing pass needs: the scale and the tallest stack. */
struct layout {
	double px_per_share;
	int depth;
	struct buf *out;
	size_t drawn;
	int height;
};

static void measure(const struct fnode *n, int depth, struct layout *l)
{
	if (n->b * l->px_per_share < MIN_PX)
		return;
	if (depth > l->depth)
		l->depth = depth;
	for (size_t i = 0; i < n->n_kid; i++)
		measure(&n->kid[i], depth + 1, l);
}

/*
 * Grey for no move, towards red for a gain of B, towards blue for a loss,
 * the full colour at FULL_MOVE or more. A fixed scale rather than one
 * relative to the largest move: a shift of whole processes (ksoftirqd's
 * share going to swapper) would otherwise pale every move inside the
 * code, and two jobs' graphs read the same.
 */
#define FULL_MOVE 0.05		/* 5 points of the samples */

static void frame_colour(double delta, int rgb[3], int *dark)
{
	static const int grey[3] = { 226, 226, 226 }, red[3] = { 214, 39, 40 }, blue[3] = { 31, 95, 191 };
	double k = fabs(delta) >= FULL_MOVE ? 1 : fabs(delta) / FULL_MOVE;
	const int *to = delta > 0 ? red : blue;

	if (fabs(delta) < 0.0005)	/* under 0.05 points: the same */
		k = 0;
	for (int i = 0; i < 3; i++)
		rgb[i] = (int)lround(grey[i] + k * (to[i] - grey[i]));
	*dark = k > 0.55;
}

static void pct(struct buf *b, double share)
{
	buf_addf(b, "%.2f%%", 100 * share);
}

/* A frame's label cut to the characters that fit, by whole UTF-8 characters. */
static void label(struct buf *out, const char *name, double w)
{
	size_t fit = w > 12 ? (size_t)((w - 6) / CHAR_W) : 0, len = strlen(name), cut;

	if (fit < 3)
		return;
	if (len <= fit) {
		html_escape(out, name);
		return;
	}
	cut = fit - 2;
	while (cut > 0 && ((unsigned char)name[cut] & 0xc0) == 0x80)
		cut--;
	html_escape_n(out, name, cut);
	buf_addstr(out, "..");
}

static void draw(const struct fnode *n, double x, int depth, struct layout *l)
{
	double w = n->b * l->px_per_share, d = n->b - n->a, kx = x;
	int rgb[3], dark, y = l->height - MARGIN - (depth + 1) * FRAME_H;
	struct buf *o = l->out;

	if (w < MIN_PX)
		return;
	frame_colour(d, rgb, &dark);
	buf_addstr(o, "<g><title>");
	html_escape(o, n->name);
	buf_addstr(o, "\nA ");
	pct(o, n->a);
	buf_addstr(o, ", B ");
	pct(o, n->b);
	buf_addf(o, " of the samples (%+.2f points)</title><rect x=\"%.2f\" y=\"%d\" width=\"%.2f\" height=\"%d\" "
		 "fill=\"rgb(%d,%d,%d)\" rx=\"2\"/>", 100 * d, x, y, w > 1 ? w - 0.6 : w, FRAME_H - 1,
		 rgb[0], rgb[1], rgb[2]);
	if (w > 12 + 3 * CHAR_W) {
		buf_addf(o, "<text x=\"%.2f\" y=\"%d\"%s>", x + 3, y + FRAME_H - 5, dark ? " fill=\"#fff\"" : "");
		label(o, n->name, w);
		buf_addstr(o, "</text>");
	}
	buf_addstr(o, "</g>\n");
	l->drawn++;
	for (size_t i = 0; i < n->n_kid; i++) {
		draw(&n->kid[i], kx, depth + 1, l);
		kx += n->kid[i].b * l->px_per_share;
	}
}

struct gone {
	char *path;
	double a;
};

/* The tops of the subtrees B never ran (no share of B, some of A, under a frame B ran). */
static void find_vanished(const struct fnode *n, struct buf *path, struct gone **g, size_t *ng, size_t *ag)
{
	size_t len = path->len;

	for (size_t i = 0; i < n->n_kid; i++) {
		const struct fnode *k = &n->kid[i];

		buf_setlen(path, len);
		if (len)
			buf_addch(path, ';');
		buf_addstr(path, k->name);
		if (k->b <= 0 && k->a > 0) {
			if (*ng == *ag) {
				*ag = *ag ? 2 * *ag : 16;
				*g = xrealloc(*g, *ag * sizeof(**g));
			}
			(*g)[*ng].path = xstrdup(path->buf);
			(*g)[(*ng)++].a = k->a;
		} else if (k->b > 0) {
			find_vanished(k, path, g, ng, ag);
		}
	}
	buf_setlen(path, len);
}

static int gone_cmp(const void *x, const void *y)
{
	double a = ((const struct gone *)x)->a, b = ((const struct gone *)y)->a;

	return a > b ? -1 : a < b;
}

static void svg_begin(struct buf *out, int width, int height, const struct flame_opts *o)
{
	buf_addf(out, "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%d\" viewBox=\"0 0 %d %d\" "
		 "font-family=\"DejaVu Sans Mono, monospace\" font-size=\"11\">\n"
		 "<rect width=\"100%%\" height=\"100%%\" fill=\"#fff\"/>\n<text x=\"%d\" y=\"20\" font-size=\"14\" "
		 "font-family=\"sans-serif\">", width, height, width, height, MARGIN);
	html_escape(out, o->title ? o->title : "differential flame graph");
	buf_addf(out, "</text>\n<text x=\"%d\" y=\"38\" font-family=\"sans-serif\" fill=\"#444\">width: share of the "
		 "samples of B (", MARGIN);
	html_escape(out, o->label_b ? o->label_b : "B");
	buf_addstr(out, "); colour: <tspan fill=\"rgb(214,39,40)\">red</tspan> where B spends a larger share than A (");
	html_escape(out, o->label_a ? o->label_a : "A");
	buf_addstr(out, "), <tspan fill=\"rgb(31,95,191)\">blue</tspan> a smaller one, full colour at 5 points or more</text>\n");
}

size_t flame_svg(struct buf *out, const struct flame_stack *v, size_t n, struct flame_opts *o,
		 struct strvec *vanished)
{
	struct fnode root = { NULL, 0, 0, NULL, 0, 0 };
	struct layout l = { 0, 0, out, 0, 0 };
	int width = o->width > 0 ? o->width : 1200;

	root.name = xstrdup("all");
	for (size_t i = 0; i < n; i++)
		if (v[i].stack && *v[i].stack)
			tree_add(&root, &v[i]);
	tree_sort(&root);
	if (root.b <= 0) {
		l.height = TOP_H + 40;
		svg_begin(out, width, l.height, o);
		buf_addf(out, "<text x=\"%d\" y=\"%d\" fill=\"#888\">no data: B has no profiled samples</text>\n",
			 MARGIN, TOP_H + 16);
		buf_addstr(out, "</svg>\n");
		o->height = l.height;
		tree_free(&root);
		return 0;
	}
	l.px_per_share = (width - 2 * MARGIN) / root.b;
	measure(&root, 0, &l);
	l.height = TOP_H + (l.depth + 1) * FRAME_H + 2 * MARGIN;
	svg_begin(out, width, l.height, o);
	draw(&root, MARGIN, 0, &l);
	buf_addstr(out, "</svg>\n");
	o->height = l.height;
	if (vanished) {
		struct gone *g = NULL;
		size_t ng = 0, ag = 0;
		struct buf path = BUF_INIT;

		find_vanished(&root, &path, &g, &ng, &ag);
		if (ng)
			qsort(g, ng, sizeof(*g), gone_cmp);
		for (size_t i = 0; i < ng; i++) {
			if (i < VANISHED_MAX && g[i].a >= 0.0005)
				strvec_pushf(vanished, "%s (A %.2f%%)", g[i].path, 100 * g[i].a);
			free(g[i].path);
		}
		free(g);
		buf_release(&path);
	}
	tree_free(&root);
	return l.drawn;
}
