/* common.c: the agent's state folder and small file helpers shared by its subcommands. */
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "agent.h"
#include "buf.h"
#include "util.h"

static const char *state_dir;

const char *agent_state_dir(void)
{
	const char *e;

	if (state_dir)
		return state_dir;
	e = getenv("KLAB_AGENT_STATE");
	return e && *e ? e : "/var/lib/klab-agent";
}

void agent_set_state_dir(const char *dir)
{
	state_dir = dir;
}

int read_small_file(const char *path, struct buf *b)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	int ret, saved;

	buf_reset(b);
	if (fd < 0)
		return -1;
	buf_set_cap(b, 1 << 20);
	ret = buf_read_fd(b, fd);
	saved = errno;
	close(fd);
	errno = saved;
	buf_rtrim(b);
	return ret;
}

const char *agent_self_exe(void)
{
	static char path[4096];
	ssize_t n;

	if (path[0])
		return path;
	n = readlink("/proc/self/exe", path, sizeof(path) - 1);
	if (n <= 0 || n >= (ssize_t)sizeof(path) - 1)
		return strcpy(path, "/proc/self/exe");
	path[n] = 0;
	return path;
}
