/* nohook.h: force-included (clang -include) into every file of a fuzz
 * build, so that strcmp is fuzz_strcmp (nohook.c), a plain byte loop.
 *
 * Why: under libFuzzer, every strcmp goes through ASan's interceptor and
 * then libFuzzer's __sanitizer_weak_hook_strcmp, which copies up to 64
 * bytes of both strings into its comparison tables.  The record code
 * compares keys with strcmp in its inner loops (the canonical order alone
 * makes ~1,000 calls per record formatted, 40 formats and JSON writes per
 * input), so that hook was the largest single cost of the fuzzer.  The
 * dictionary (NAME.dict) names every key, so the hints it gave are not
 * needed.  fuzz_strcmp is compiled with ASan: a read past either string is
 * still caught. */
#ifndef JOBREG_FUZZ_NOHOOK_H
#define JOBREG_FUZZ_NOHOOK_H

#include <string.h>

int fuzz_strcmp(const char *a, const char *b);
#define strcmp(a, b) fuzz_strcmp((a), (b))

#endif
