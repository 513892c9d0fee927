/* stamp: a command for tests/bench/run that notes its start and its end.
 *
 *   stamp FILE [RELEASE]
 *
 * Appends "s T" to FILE as it starts and "e T" as it ends, T in
 * nanoseconds of CLOCK_MONOTONIC (one clock for every process of the
 * machine), each line one write(2) with O_APPEND.  With RELEASE it ends
 * only once that file exists (a run held until the benchmark lets it go).
 * A line of runs that never overlap leaves "s e s e ...": the gap between
 * one run's end and the next run's start is the next "s" less the "e"
 * before it.
 */
#define _POSIX_C_SOURCE 200809L
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static int note(const char *file, char kind)
{
	struct timespec ts;
	char line[64];
	clock_gettime(CLOCK_MONOTONIC, &ts);
	int len = snprintf(line, sizeof line, "%c %lld\n", kind,
			   (long long)ts.tv_sec * 1000000000LL + ts.tv_nsec);
	int fd = open(file, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
	if (fd < 0) {
		perror(file);
		return -1;
	}
	ssize_t n = write(fd, line, (size_t)len);
	close(fd);
	return n == len ? 0 : -1;
}

int main(int argc, char **argv)
{
	if (argc < 2 || argc > 3) {
		fprintf(stderr, "usage: stamp FILE [RELEASE]\n");
		return 2;
	}
	if (note(argv[1], 's') < 0)
		return 1;
	if (argc == 3) {
		struct timespec nap = { 0, 5000000 };
		while (access(argv[2], F_OK) < 0)
			nanosleep(&nap, NULL);
	}
	return note(argv[1], 'e') < 0;
}
