/* lib-lock.c: lock files: taking, refusing while held, waiting with a bound, releasing by close. */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "lock.h"
#include "log.h"
#include "tap.h"
#include "util.h"

int main(void)
{
	char *p = xasprintf("%s/a.lock", tap_scratch_dir());
	char *missing = xasprintf("%s/no-such-folder/a.lock", tap_scratch_dir());
	int64_t t0;
	int fd, fd2, st = 0;
	pid_t pid;

	is_int(lock_held(p), 0, "no file: nobody holds the lock");
	fd = lock_file(p, 0);
	ok(fd >= 0 && file_exists(p), "lock_file makes the file and takes the lock");
	ok(fcntl(fd, F_GETFD) & FD_CLOEXEC, "the lock's fd is close-on-exec");
	is_int(lock_held(p), 1, "lock_held sees it held");
	is_int(lock_file(p, 0), LOCK_FILE_BUSY, "a second lock without waiting: busy");
	t0 = now_ms();
	is_int(lock_file(p, 300), LOCK_FILE_BUSY, "a bounded wait on a held lock: busy");
	ok(now_ms() - t0 >= 250, "and it waited (%lld ms)", (long long)(now_ms() - t0));

	/* Another process holds it for 300 ms: a bounded wait of 5 s gets it. */
	close(fd);
	pid = fork();
	if (pid == 0) {
		int cfd = lock_file(p, 0);
		usleep(300 * 1000);
		_exit(cfd >= 0 ? 0 : 1);
	}
	usleep(100 * 1000);
	is_int(lock_held(p), 1, "the child's lock is seen from here");
	fd2 = lock_file(p, 5000);
	ok(fd2 >= 0, "a waiting lock gets it when the holder exits");
	waitpid(pid, &st, 0);
	ok(WIFEXITED(st) && WEXITSTATUS(st) == 0, "the child had the lock");
	close(fd2);
	is_int(lock_held(p), 0, "closed: nobody holds it");

	log_set_level(LOG_CRIT);
	is_int(lock_file(missing, 0), -1, "a lock file in a missing folder: an error");
	log_set_level(LOG_INFO);
	ok(strstr(log_last_error(), "no-such-folder/a.lock") != NULL, "the error names the file: %s",
	   log_last_error());
	free(p);
	free(missing);
	return done_testing();
}
