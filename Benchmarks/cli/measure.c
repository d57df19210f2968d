// Runs a command RUNS times, each in a fresh process with standard input, output and error on
// /dev/null, and prints "MIN_WALL_S MIN_CPU_S MAX_PEAK_RSS_KIB": wall time from
// CLOCK_MONOTONIC around fork..wait4, CPU (user + system) and peak RSS from wait4's rusage
// (the child's own, as /usr/bin/time reports it, to the microsecond and KiB).
//
//   measure RUNS COMMAND [ARGUMENTS...]
//
// Environment: MEASURE_EXPECT (default 0) is the exit status every run must have; a run
// that ends otherwise stops the measure with status 1 (after showing the command's standard
// error, which is kept for that run). MEASURE_WARMUP (default 0) runs are made first and not
// counted: run.sh evicts a binary from the page cache and warms it with one run, so that every
// binary is measured with its pages read the same way (how the page cache holds a file it
// wrote itself, as `cp` does, changed peak RSS by 2 MiB).
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static double seconds(struct timespec t) { return (double)t.tv_sec + (double)t.tv_nsec / 1e9; }

int main(int argc, char **argv) {
  if (argc < 3) {
    fprintf(stderr, "usage: measure RUNS COMMAND [ARGUMENTS...]\n");
    return 64;
  }
  int runs = atoi(argv[1]);
  int expect = getenv("MEASURE_EXPECT") ? atoi(getenv("MEASURE_EXPECT")) : 0;
  int warmup = getenv("MEASURE_WARMUP") ? atoi(getenv("MEASURE_WARMUP")) : 0;
  double best_wall = 1e300, best_cpu = 1e300;
  long max_rss = 0;
  char err_path[] = "/tmp/courier-measure-err.XXXXXX";
  int err_fd = mkstemp(err_path);
  if (err_fd < 0) { perror("mkstemp"); return 1; }
  unlink(err_path);
  for (int i = -warmup; i < runs; i++) {
    if (ftruncate(err_fd, 0) != 0 || lseek(err_fd, 0, SEEK_SET) != 0) { perror("err"); return 1; }
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    pid_t pid = fork();
    if (pid < 0) { perror("fork"); return 1; }
    if (pid == 0) {
      int null = open("/dev/null", O_RDWR);
      dup2(null, 0);
      dup2(null, 1);
      dup2(err_fd, 2);
      execvp(argv[2], argv + 2);
      perror(argv[2]);
      _exit(127);
    }
    int status = 0;
    struct rusage usage;
    if (wait4(pid, &status, 0, &usage) < 0) { perror("wait4"); return 1; }
    clock_gettime(CLOCK_MONOTONIC, &t1);
    if (!WIFEXITED(status) || WEXITSTATUS(status) != expect) {
      fprintf(stderr, "measure: %s: run %d ended with status %d (signal %d), expected %d\n",
              argv[2], i + 1, WIFEXITED(status) ? WEXITSTATUS(status) : -1,
              WIFSIGNALED(status) ? WTERMSIG(status) : 0, expect);
      char buffer[4096];
      lseek(err_fd, 0, SEEK_SET);
      ssize_t n;
      while ((n = read(err_fd, buffer, sizeof buffer)) > 0) fwrite(buffer, 1, (size_t)n, stderr);
      return 1;
    }
    if (i < 0) continue;  // a warm-up run
    double wall = seconds(t1) - seconds(t0);
    double cpu = (double)usage.ru_utime.tv_sec + (double)usage.ru_utime.tv_usec / 1e6 +
                 (double)usage.ru_stime.tv_sec + (double)usage.ru_stime.tv_usec / 1e6;
    if (wall < best_wall) best_wall = wall;
    if (cpu < best_cpu) best_cpu = cpu;
    if (usage.ru_maxrss > max_rss) max_rss = usage.ru_maxrss;
  }
  printf("%.6f %.6f %ld\n", best_wall, best_cpu, max_rss);
  return 0;
}
