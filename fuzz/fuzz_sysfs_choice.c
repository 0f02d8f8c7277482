/* sysfs choice files, KSM's advisor_mode and THP's enabled (parse_sysfs_choice, src/parse/kv.c): the word fits
 * its buffer or is refused (the output then untouched), holds no ']', and "[word]" parses back
 * to it. */
#include "fuzz.h"
#include "parse/parse.h"

static void check(const char *buf, size_t cap)
{
	char word[64];
	memset(word, 'x', sizeof(word));
	if (parse_sysfs_choice(buf, word, cap) < 0) {
		for (size_t i = 0; i < sizeof(word); i++)
			FUZZ_CHECK(word[i] == 'x');
		return;
	}
	FUZZ_CHECK(fuzz_terminated(word, cap));
	FUZZ_CHECK(word[0] && !strchr(word, ']'));
	for (size_t i = strlen(word) + 1; i < sizeof(word); i++)
		FUZZ_CHECK(word[i] == 'x'); /* nothing written past the word */
	char printed[80], again[64];
	snprintf(printed, sizeof(printed), "never [%s] always\n", word);
	FUZZ_CHECK(parse_sysfs_choice(printed, again, sizeof(again)) == 0 && !strcmp(again, word));
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *buf = fuzz_cstring(data, size);
	check(buf, 16); /* struct ksm_sysfs's advisor_mode */
	check(buf, 2);
	check(buf, 64);
	free(buf);
	return 0;
}
