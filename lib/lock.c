/* lock.c: exclusive flocks on lock files, with or without waiting. */
#include <errno.h>
#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include "lock.h"
#include "log.h"
#include "util.h"

int lock_file(const char *path, long wait_ms)
{
	int64_t deadline = wait_ms > 0 ? now_ms() + wait_ms : 0;
	int fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0644);

	if (fd < 0)
		return error_errno("cannot open the lock file '%s'", path);
	for (;;) {
		if (flock(fd, wait_ms < 0 ? LOCK_EX : LOCK_EX | LOCK_NB) == 0)
			return fd;
		if (errno != EWOULDBLOCK) {
			error_errno("cannot lock '%s'", path);
			close(fd);
			return -1;
		}
		if (!deadline || now_ms() >= deadline) {
			close(fd);
			return LOCK_FILE_BUSY;
		}
		usleep(100 * 1000);
	}
}

int lock_held(const char *path)
{
	int fd = open(path, O_RDWR | O_CLOEXEC), ret = 0;

	if (fd < 0)
		return errno == ENOENT ? 0 : error_errno("cannot open the lock file '%s'", path);
	if (flock(fd, LOCK_EX | LOCK_NB) == 0)
		flock(fd, LOCK_UN);
	else if (errno == EWOULDBLOCK)
		ret = 1;
	else
		ret = error_errno("cannot lock '%s'", path);
	close(fd);
	return ret;
}
