/* lines RATE SECONDS: print RATE bytes a second of 64-byte lines for
 * SECONDS, each line its own write(2), as a program with a line-buffered
 * stdout does. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	if (argc != 3)
		return 2;
	double rate = atof(argv[1]), seconds = atof(argv[2]);
	char line[64];
	memset(line, 'x', sizeof line);
	line[63] = '\n';
	long total = (long)(rate * seconds / sizeof line);
	struct timespec t0, now;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (long i = 0; i < total; i++) {
		if (write(1, line, sizeof line) != (ssize_t)sizeof line)
			return 1;
		/* keep to the rate: sleep when ahead of it */
		clock_gettime(CLOCK_MONOTONIC, &now);
		double ahead = (double)(i + 1) * sizeof line / rate -
			       ((double)(now.tv_sec - t0.tv_sec) + (now.tv_nsec - t0.tv_nsec) / 1e9);
		if (ahead > 0.001) {
			struct timespec ts = { 0, (long)(ahead * 1e9) };
			nanosleep(&ts, NULL);
		}
	}
	return 0;
}
