/* quantity.c - Kubernetes resource quantities ("500m", "1.5Gi", "2e3") as exact
 * nano-unit integers, and their canonical text as apimachinery's Quantity.String()
 * writes it (binary suffixes for whole multiples of 1024 at or above 1024 when the
 * quantity was written with one, else decimal suffixes n u m "" k M G T P E with the
 * largest exponent, a multiple of 3, that keeps the mantissa whole). For the PodGroup's
 * minResources (sums of the pods' requests). */
#include "quantity.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kube/util.h"

#define NANO ((qty_t)1000000000)

static const char *const BIN_SFX[] = { "Ki", "Mi", "Gi", "Ti", "Pi", "Ei" };
static const char DEC_SFX[] = "num kMGTPE"; /* exponents -9 -6 -3 0 3 ... 18 */

static int suffix_scale(const char *s, int *exp10, qty_t *bin_mult, int *binary)
{
    *exp10 = 0;
    *bin_mult = 1;
    *binary = 0;
    if (!*s)
        return 0;
    for (int i = 0; i < 6; i++)
        if (strcmp(s, BIN_SFX[i]) == 0) {
            *binary = 1;
            for (int k = 0; k <= i; k++)
                *bin_mult *= 1024;
            return 0;
        }
    if ((s[0] == 'e' || s[0] == 'E') && s[1]) { /* a signed exponent, as apimachinery's ParseInt reads it */
        long long e;
        if ((s[1] == '+' && s[2] == '-') || kube_parse_int(s + 1 + (s[1] == '+'), -9, 18, &e) < 0)
            return -1;
        *exp10 = (int)e;
        return 0;
    }
    const char *p = s[1] ? NULL : strchr(DEC_SFX, s[0]);
    if (!p || *p == ' ')
        return -1;
    *exp10 = (int)(p - DEC_SFX) * 3 - 9;
    return 0;
}

static int mul(qty_t *x, qty_t k) { return __builtin_mul_overflow(*x, k, x) ? -1 : 0; }

int quantity_parse(const char *s, qty_t *nano, int *binary)
{
    int neg = 0;
    if (!s)
        return -1;
    if (*s == '+' || *s == '-')
        neg = *s++ == '-';
    qty_t num = 0, den = 1;
    int digits = 0, bad = 0;
    for (; isdigit((unsigned char)*s); s++, digits++)
        bad |= mul(&num, 10) < 0 || __builtin_add_overflow(num, *s - '0', &num);
    if (*s == '.')
        for (s++; isdigit((unsigned char)*s); s++, digits++)
            bad |= mul(&num, 10) < 0 || __builtin_add_overflow(num, *s - '0', &num) || mul(&den, 10) < 0;
    int exp10;
    qty_t mult;
    if (!digits || bad || suffix_scale(s, &exp10, &mult, binary) < 0 || mul(&num, mult) < 0 || mul(&num, NANO) < 0)
        return -1;
    for (int e = exp10; e > 0; e--)
        if (mul(&num, 10) < 0)
            return -1;
    for (int e = exp10; e < 0; e++)
        if (mul(&den, 10) < 0)
            return -1;
    /* (digits / den) * mult * 10^exp10 in nano units, rounded up as Kubernetes does */
    qty_t v = num / den + (num % den != 0);
    *nano = neg ? -v : v;
    return 0;
}

static void put_int(char *buf, size_t n, qty_t v)
{
    char tmp[48];
    size_t i = sizeof tmp;
    int neg = v < 0;
    if (neg)
        v = -v;
    tmp[--i] = 0;
    do {
        tmp[--i] = (char)('0' + (int)(v % 10));
        v /= 10;
    } while (v && i > 1);
    if (neg)
        tmp[--i] = '-';
    snprintf(buf, n, "%s", tmp + i);
}

char *quantity_format(qty_t nano, int binary)
{
    char num[48], *out = NULL;
    qty_t a = nano < 0 ? -nano : nano;
    if (binary && a % NANO == 0 && a >= 1024 * NANO) {
        qty_t v = nano / NANO;
        int k = 0;
        while (k < 6 && v % 1024 == 0)
            v /= 1024, k++;
        put_int(num, sizeof num, v);
        return asprintf(&out, "%s%s", num, k ? BIN_SFX[k - 1] : "") < 0 ? NULL : out;
    }
    if (nano == 0)
        return strdup("0");
    /* decimal: strip factors of ten, then bring the exponent down to a multiple of 3 */
    qty_t m = nano;
    int e = -9;
    while (m % 10 == 0 && e < 18)
        m /= 10, e++;
    while (((e % 3) + 3) % 3 != 0)
        m *= 10, e--;
    put_int(num, sizeof num, m);
    char sfx[2] = { DEC_SFX[(e + 9) / 3], 0 };
    if (sfx[0] == ' ')
        sfx[0] = 0;
    return asprintf(&out, "%s%s", num, sfx) < 0 ? NULL : out;
}
