/* flamegraph.h: a differential flame graph of folded call stacks (B against A), drawn by klab as SVG. */
#ifndef KLAB_FLAMEGRAPH_H
#define KLAB_FLAMEGRAPH_H

#include <stddef.h>

#include "buf.h"
#include "strvec.h"

/* One folded stack and its share of each side's samples (0..1). */
struct flame_stack {
	char *stack;		/* "comm;outermost frame;...;leaf frame" */
	double a, b;
};

struct flame_opts {
	const char *title;
	const char *label_a, *label_b;	/* the kernels, for the legend */
	int width;			/* of the SVG in px; 0: 1200 */
	int height;			/* out: the height flame_svg() gave it, for the page's aspect ratio */
};

/*
 * Draw the stacks as one SVG document into OUT. The stacks are merged
 * into a tree of frames, each with its inclusive share of A's and of B's
 * samples. A frame is a rectangle whose width is its share of B's samples
 * (the root "all" spans the width), children sit on their parent, sorted
 * by name, so B's flame graph is what one sees; the colour says how the
 * share moved from A: red where B spends a larger share of its samples in
 * the frame, blue where it spends a smaller one, grey where it is the
 * same, deeper with the size of the move, full at 5 points of the samples
 * (a fixed scale, so two jobs' graphs read alike). Every frame has a <title> tooltip with its name and both shares;
 * every name is escaped with html_escape(). Frames narrower than half a
 * pixel are left out with their children.
 *
 * A frame B never ran has no width, so it cannot be drawn: VANISHED (may
 * be NULL) receives, for the five with the largest share of A, a line
 * "frame;path (A 5.20%)". Returns the number of frames drawn; 0 when B
 * has no samples (OUT then holds an SVG that says so).
 */
size_t flame_svg(struct buf *out, const struct flame_stack *v, size_t n, struct flame_opts *o,
		 struct strvec *vanished);

#endif
