/*
 * build_isolate.c: a build of untrusted patches writes nothing that a later
 * build reads. Its build folder and ccache are overlays (the shared folders
 * read-only below, a scratch folder of this build above), mounted on the
 * shared paths themselves in a mount namespace of this process only, so
 * that make sees the same paths (an incremental build) and every other
 * process sees the shared folders unchanged. Thrown away after the build.
 * docs/security.md, "Cache poisoning".
 */
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <unistd.h>

#include "kbuild/build_int.h"
#include "log.h"
#include "util.h"

int build_untrusted(const struct build *b)
{
	return b->req->series != NULL;
}

/* Mount an overlay on SHARED: SHARED below (read-only), SCRATCH/NAME-{upper,work} above. */
static int overlay_on(const struct build *b, const char *shared, const char *name, struct buf *err)
{
	char *upper = xasprintf("%s/%s-upper", b->scratch, name), *work = xasprintf("%s/%s-work", b->scratch, name);
	char *opts = NULL;
	int ret = -1;

	if (strpbrk(shared, ",:\\") || strpbrk(b->scratch, ",:\\")) {
		error_to(err, "the folder '%s' or '%s' has a ',', ':' or '\\' in its name", shared, b->scratch);
		goto out;
	}
	/* the shared folder keeps its owner (the sandbox user, as after a trusted build) */
	if (sandbox_own(&b->sb, shared, err) < 0)
		goto out;
	if (mkdir_p(upper) < 0 || mkdir_p(work) < 0) {
		error_to(err, "cannot make '%s' or '%s': %s", upper, work, strerror(errno));
		goto out;
	}
	/* the sandbox user writes the upper folder; the merged root takes its owner */
	if (sandbox_own(&b->sb, upper, err) < 0)
		goto out;
	opts = xasprintf("lowerdir=%s,upperdir=%s,workdir=%s", shared, upper, work);
	if (mount("klab-build", shared, "overlay", MS_NOSUID | MS_NODEV, opts) < 0) {
		error_to(err, "cannot mount the overlay of the build over '%s': %s", shared, strerror(errno));
		goto out;
	}
	ret = 0;
out:
	free(upper);
	free(work);
	free(opts);
	return ret;
}

int build_isolate(struct build *b, struct buf *err)
{
	if (!build_untrusted(b))
		return 0;
	if (b->sb.off) {
		info("the build of series patches is not isolated from the build cache ([lab] sandbox = none)");
		return 0;
	}
	if (geteuid() != 0) {
		/* the sandbox user is klab's own user then: the cache is that user's anyway */
		info("the build of series patches shares the build cache (klab does not run as root)");
		return 0;
	}
	b->scratch = xasprintf("%s/scratch/%ld-%.16s", b->cache, (long)getpid(), b->key);
	if (file_exists(b->scratch) && remove_tree(b->scratch) < 0)
		return error_to(err, "cannot remove the old scratch folder '%s'", b->scratch);
	if (mkdir_p(b->scratch) < 0)
		return error_to(err, "cannot make the scratch folder '%s': %s", b->scratch, strerror(errno));
	b->mntns = open("/proc/self/ns/mnt", O_RDONLY | O_CLOEXEC);
	if (b->mntns < 0)
		return error_to(err, "cannot open /proc/self/ns/mnt: %s", strerror(errno));
	if (unshare(CLONE_NEWNS) < 0) {
		error_to(err, "cannot make a mount namespace: %s", strerror(errno));
		goto fail;
	}
	b->isolated = 1;
	/* mounts of the host still reach us; ours reach nobody */
	if (mount(NULL, "/", NULL, MS_REC | MS_SLAVE, NULL) < 0) {
		error_to(err, "cannot make / a slave mount: %s", strerror(errno));
		goto fail;
	}
	if (overlay_on(b, b->obj, "obj", err) < 0)
		goto fail;
	b->obj_overlay = 1;
	if (overlay_on(b, b->ccache_dir, "ccache", err) < 0)
		goto fail;
	b->ccache_overlay = 1;
	return 0;
fail:
	build_unisolate(b);
	return -1;
}

void build_unisolate(struct build *b)
{
	if (b->ccache_overlay && umount2(b->ccache_dir, MNT_DETACH) < 0)
		warn("cannot unmount the overlay over '%s': %s", b->ccache_dir, strerror(errno));
	if (b->obj_overlay && umount2(b->obj, MNT_DETACH) < 0)
		warn("cannot unmount the overlay over '%s': %s", b->obj, strerror(errno));
	b->ccache_overlay = b->obj_overlay = 0;
	if (b->isolated && b->mntns >= 0 && setns(b->mntns, CLONE_NEWNS) < 0)
		warn("cannot go back to klab's mount namespace: %s", strerror(errno));
	b->isolated = 0;
	if (b->mntns >= 0)
		close(b->mntns);
	b->mntns = -1;
	if (b->scratch) {
		remove_tree(b->scratch);
		free(b->scratch);
		b->scratch = NULL;
	}
}
