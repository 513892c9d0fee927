/* replay: run the fuzz harness over files without libFuzzer, so the seed
 * corpus (or a crash file) can be checked with any C compiler and its
 * sanitizers (tests/fuzz/run --replay).  Arguments are files or
 * directories (their regular files, one level). */
#include <dirent.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int replay_file(const char *path)
{
	FILE *f = fopen(path, "rb");
	if (!f) {
		perror(path);
		return -1;
	}
	size_t cap = 4096, len = 0;
	unsigned char *buf = malloc(cap);
	for (;;) {
		if (!buf) {
			fclose(f);
			fprintf(stderr, "replay: out of memory\n");
			return -1;
		}
		len += fread(buf + len, 1, cap - len, f);
		if (len < cap)
			break;
		unsigned char *bigger = realloc(buf, cap *= 2);
		if (!bigger)
			free(buf);
		buf = bigger;
	}
	int err = ferror(f);
	fclose(f);
	if (err) {
		fprintf(stderr, "replay: cannot read %s\n", path);
		free(buf);
		return -1;
	}
	/* Exact size, so ASan sees any read past the end. */
	unsigned char *exact = malloc(len ? len : 1);
	if (!exact) {
		free(buf);
		return -1;
	}
	memcpy(exact, buf, len);
	free(buf);
	fprintf(stderr, "replay: %s (%zu bytes)\n", path, len);
	LLVMFuzzerTestOneInput(exact, len);
	free(exact);
	return 0;
}

static int cmp(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

int main(int argc, char **argv)
{
	int bad = 0, n = 0;
	for (int i = 1; i < argc; i++) {
		struct stat sb;
		if (stat(argv[i], &sb) < 0) {
			perror(argv[i]);
			bad = 1;
			continue;
		}
		if (!S_ISDIR(sb.st_mode)) {
			bad |= replay_file(argv[i]) < 0;
			n++;
			continue;
		}
		DIR *d = opendir(argv[i]);
		if (!d) {
			perror(argv[i]);
			bad = 1;
			continue;
		}
		char **names = NULL;
		size_t count = 0;
		struct dirent *e;
		while ((e = readdir(d))) {
			if (e->d_name[0] == '.')
				continue;
			char **more = realloc(names, (count + 1) * sizeof *names);
			if (!more)
				return 2;
			names = more;
			size_t len = strlen(argv[i]) + strlen(e->d_name) + 2;
			names[count] = malloc(len);
			if (!names[count])
				return 2;
			snprintf(names[count], len, "%s/%s", argv[i], e->d_name);
			count++;
		}
		closedir(d);
		if (count)
			qsort(names, count, sizeof *names, cmp);
		for (size_t k = 0; k < count; k++) {
			if (stat(names[k], &sb) == 0 && S_ISREG(sb.st_mode)) {
				bad |= replay_file(names[k]) < 0;
				n++;
			}
			free(names[k]);
		}
		free(names);
	}
	fprintf(stderr, "replay: %d input%s, no property violated\n", n, n == 1 ? "" : "s");
	return bad ? 1 : 0;
}
