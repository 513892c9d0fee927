/* listfloor: the floor of reading every record of a registry, for
 * tests/bench/run — what `jobreg-get -a` does at the least, on one thread:
 * list the directory with getdents64(2) (one large buffer), keep the names
 * that do not begin with '.' (the regular-file check from d_type, fstat
 * only for DT_UNKNOWN), and read each file with openat, one read(2) and
 * close.  With -s, also fstat(2) of each opened descriptor: the check that
 * what was opened is still a regular file, which jobreg makes of every read
 * (a FIFO swapped in after the listing must not be read).  No sort, no parse, no output but "FILES BYTES"; 74 on an
 * I/O error.  Linux only (a benchmark helper, not part of jobreg). */
#define _GNU_SOURCE
#include <dirent.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#define BUFSZ (65536 + 1)

struct linux_dirent64 {
	unsigned long long d_ino;
	long long d_off;
	unsigned short d_reclen;
	unsigned char d_type;
	char d_name[];
};

static void die(const char *what)
{
	perror(what);
	exit(74);
}

int main(int argc, char **argv)
{
	static char buf[1 << 20], data[BUFSZ];
	char **names = NULL;
	size_t count = 0, cap = 0;
	unsigned long long bytes = 0;

	int check = 0, arg = 1;
	if (arg < argc - 1 && strcmp(argv[arg], "-s") == 0) {
		check = 1;
		arg++;
	}
	if (arg != argc - 1) {
		fprintf(stderr, "usage: listfloor [-s] DIR\n");
		return 64;
	}
	const char *path = argv[arg];
	int dir = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (dir < 0)
		die(path);
	for (;;) {
		long n = syscall(SYS_getdents64, dir, buf, sizeof buf);
		if (n < 0)
			die("getdents64");
		if (n == 0)
			break;
		for (long off = 0; off < n;) {
			struct linux_dirent64 *e = (void *)(buf + off);
			off += e->d_reclen;
			if (e->d_name[0] == '.')
				continue;
			if (e->d_type == DT_UNKNOWN) {
				struct stat st;
				if (fstatat(dir, e->d_name, &st, AT_SYMLINK_NOFOLLOW) < 0 ||
				    !S_ISREG(st.st_mode))
					continue;
			} else if (e->d_type != DT_REG) {
				continue;
			}
			if (count == cap) {
				cap = cap ? cap * 2 : 1024;
				names = realloc(names, cap * sizeof *names);
				if (!names)
					die("realloc");
			}
			if (!(names[count++] = strdup(e->d_name)))
				die("strdup");
		}
	}
	for (size_t i = 0; i < count; i++) {
		int fd = openat(dir, names[i], O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
		if (fd < 0)
			die(names[i]);
		struct stat st;
		if (check && (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode)))
			die(names[i]);
		ssize_t n = read(fd, data, BUFSZ);
		if (n < 0)
			die(names[i]);
		bytes += (unsigned long long)n;
		close(fd);
	}
	printf("%zu %llu\n", count, bytes);
	return 0;
}
