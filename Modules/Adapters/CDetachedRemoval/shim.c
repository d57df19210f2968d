// See include/CDetachedRemoval.h. Between each fork and _exit only async-signal-safe calls
// run (POSIX 2024 lists _Fork, close, unlink, _exit; glibc documents _Fork as such).
#define _GNU_SOURCE
#include "CDetachedRemoval.h"

#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#if defined(__GLIBC__) && (__GLIBC__ > 2 || (__GLIBC__ == 2 && __GLIBC_MINOR__ >= 34))
#define COURIER_HAS_FORK_ 1
#else
#define COURIER_HAS_FORK_ 0
#endif

int courier_unlink_detached(const char *path, int highest) {
#if COURIER_HAS_FORK_
  sigset_t all, previous;
  sigfillset(&all);
  if (pthread_sigmask(SIG_SETMASK, &all, &previous) != 0) return -1;
  pid_t child = _Fork();
  if (child == 0) {
    // The child: one more fork, so that nothing of the caller's waits for the remover.
    if (_Fork() == 0) {
      for (int fd = 0; fd <= highest; fd++) close(fd);
      unlink(path);
    }
    _exit(0);
  }
  int saved = errno;
  pthread_sigmask(SIG_SETMASK, &previous, NULL);
  if (child < 0) {
    errno = saved;
    return -1;
  }
  int status;
  while (waitpid(child, &status, 0) < 0 && errno == EINTR) {
  }
  return 0;
#else
  (void)path;
  (void)highest;
  return -1;
#endif
}
