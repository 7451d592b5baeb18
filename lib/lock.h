/* lock.h: "one process at a time" through an flock held on an open file. */
#ifndef KLAB_LOCK_H
#define KLAB_LOCK_H

/* lock_file()'s answer when another process holds the lock. */
#define LOCK_FILE_BUSY (-2)

/*
 * Open PATH (made with mode 0644 when missing; the folder must exist) and
 * take an exclusive flock on it. wait_ms 0: do not wait; < 0: wait as long
 * as it takes; > 0: wait at most that long. Returns the fd, which holds
 * the lock until it is closed (it is close-on-exec, so children do not
 * inherit the lock); LOCK_FILE_BUSY when another process holds it after
 * the wait (nothing logged: the caller knows whose lock it is); or -1 on
 * an error (logged, naming the file).
 */
int lock_file(const char *path, long wait_ms);

/*
 * 1 when some process holds PATH's lock now, 0 when none does (or PATH
 * does not exist), -1 on an error (logged).
 */
int lock_held(const char *path);

#endif
