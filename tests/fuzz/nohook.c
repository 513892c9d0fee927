/* nohook.c: strcmp for the fuzz builds (see nohook.h), built with the
 * sanitizers but without coverage. */
int fuzz_strcmp(const char *a, const char *b);

int fuzz_strcmp(const char *a, const char *b)
{
	const unsigned char *x = (const unsigned char *)a;
	const unsigned char *y = (const unsigned char *)b;
	while (*x && *x == *y) {
		x++;
		y++;
	}
	return (*x > *y) - (*x < *y);
}
