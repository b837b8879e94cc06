/* The baseline of the dispatch benchmark: starts PROGRAM COUNT times with
 * posix_spawn, at most IN_FLIGHT at once, and reaps each with waitpid; no
 * bookkeeping at all. Usage: spawn_loop COUNT IN_FLIGHT PROGRAM */
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

extern char** environ;

static int spawn_one(char* program) {
  char* argv[] = {program, NULL};
  pid_t pid;
  int error = posix_spawn(&pid, program, NULL, NULL, argv, environ);
  if (error != 0) fprintf(stderr, "spawn_loop: cannot start %s: %s\n", program, strerror(error));
  return error;
}

static int reap_one(void) {
  int status;
  if (waitpid(-1, &status, 0) < 0) {
    perror("spawn_loop: waitpid");
    return 1;
  }
  return !(WIFEXITED(status) && WEXITSTATUS(status) == 0);
}

int main(int argc, char** argv) {
  if (argc != 4) {
    fprintf(stderr, "usage: spawn_loop COUNT IN_FLIGHT PROGRAM\n");
    return 2;
  }
  long count = strtol(argv[1], NULL, 10);
  long in_flight_max = strtol(argv[2], NULL, 10);
  long started = 0, running = 0, failed = 0;
  while (started < count || running > 0) {
    if (started < count && running < in_flight_max) {
      if (spawn_one(argv[3]) != 0) return 1;
      ++started;
      ++running;
    } else {
      failed += reap_one();
      --running;
    }
  }
  if (failed > 0) fprintf(stderr, "spawn_loop: %ld runs failed\n", failed);
  return failed > 0;
}
