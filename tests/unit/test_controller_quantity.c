/* test_controller_quantity.c - resource quantities: exact parsing and the canonical text
 * apimachinery's Quantity.String() writes (the PodGroup's minResources). */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdlib.h>
#include <cmocka.h>

#include "../../controller/quantity.h"

static void roundtrip(const char *in, long long times, const char *want)
{
    qty_t q;
    int bin;
    assert_int_equal(quantity_parse(in, &q, &bin), 0);
    char *s = quantity_format(q * times, bin);
    assert_non_null(s);
    assert_string_equal(s, want);
    free(s);
}

static void test_canonical(void **state)
{
    (void)state;
    roundtrip("1", 2, "2");
    roundtrip("500m", 3, "1500m");
    roundtrip("1.5", 1, "1500m");
    roundtrip("2000", 1, "2k");
    roundtrip("10000", 1, "10k");
    roundtrip("100", 1, "100");
    roundtrip("0.1", 1, "100m");
    roundtrip("1Gi", 3, "3Gi");
    roundtrip("512Mi", 3, "1536Mi");
    roundtrip("512", 1, "512"); /* binary below 1024 */
    roundtrip("1Ki", 1, "1Ki");
    roundtrip("1e3", 2, "2k");
    roundtrip("1e+3", 1, "1k");
    roundtrip("1E-3", 1, "1m");
    roundtrip("1E", 1, "1E"); /* the exa suffix, not an exponent */
    roundtrip("1M", 1, "1M");
    roundtrip("0", 4, "0");
    roundtrip("1n", 1, "1n");
    roundtrip("64Gi", 1000, "64000Gi");
}

static void test_malformed(void **state)
{
    (void)state;
    qty_t q;
    int bin;
    const char *bad[] = { "",
                          "m",
                          "1x",
                          "1KiB",
                          "1..2",
                          "--1",
                          "1e",
                          "1e99",
                          "1e+",
                          "1e+-3",
                          "1e 3",
                          "1e3x",
                          "99999999999999999999999999999999999999Ei" };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
        assert_int_equal(quantity_parse(bad[i], &q, &bin), -1);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_canonical),
        cmocka_unit_test(test_malformed),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
