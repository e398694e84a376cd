/* bridge/value.c - helpers for the tagged value (see value.h). */
#include "value.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char kind_letters[P4J_KIND_COUNT] = {
#define P4J_KIND_LETTER(name, letter) letter,
    P4J_KIND_TABLE(P4J_KIND_LETTER)
#undef P4J_KIND_LETTER
};

static const char *const kind_names[P4J_KIND_COUNT] = {
#define P4J_KIND_NAME(name, letter) #name,
    P4J_KIND_TABLE(P4J_KIND_NAME)
#undef P4J_KIND_NAME
};

char p4j_kind_letter(p4j_kind kind)
{
    return (unsigned)kind < P4J_KIND_COUNT ? kind_letters[kind] : 0;
}

const char *p4j_kind_name(p4j_kind kind)
{
    return (unsigned)kind < P4J_KIND_COUNT ? kind_names[kind] : "P4J_?";
}

bool p4j_kind_has_ref(p4j_kind kind)
{
    switch (kind) {
    case P4J_REF: case P4J_LIST: case P4J_SET: case P4J_MAP: case P4J_ARRAY:
    case P4J_ITERATOR: case P4J_CLASS:
        return true;
    default:
        return false;
    }
}

void p4j_value_clear(p4j_value *v)
{
    free(v->owned);
    v->owned = NULL;
}

static size_t enc_unit(p4j_enc enc)
{
    return enc == P4J_ENC_UTF16 ? 2 : enc == P4J_ENC_UCS4 ? 4 : 1;
}

int p4j_value_set_string(p4j_value *v, p4j_kind kind, const void *data, size_t len,
                         p4j_enc enc)
{
    size_t bytes = len * enc_unit(enc);
    void *dst = v->inl;
    v->owned = NULL;
    if (bytes > sizeof v->inl) {
        dst = malloc(bytes);
        if (!dst)
            return -1;
        v->owned = dst;
    }
    if (bytes)
        memcpy(dst, data, bytes);
    v->kind = kind;
    v->u.s.data = dst;
    v->u.s.len = len;
    v->u.s.enc = enc;
    return 0;
}

static p4j_float_printer float_printer;

void p4j_set_float_printer(p4j_float_printer fn)
{
    __atomic_store_n(&float_printer, fn, __ATOMIC_RELEASE);
}

/* Whether every JDK's Float.toString prints f exactly (the double read back is f). */
static bool printed_exactly(float f)
{
    return !isfinite(f) || (fabsf(f) < 16777216.0f && f == truncf(f));
}

/* The shortest text that reads back as f, read as a double. */
static double shortest(float f)
{
    char buf[32];
    for (int digits = 1; digits <= 9; digits++) {
        snprintf(buf, sizeof buf, "%.*g", digits, (double)f);
        if (strtof(buf, NULL) == f)
            return strtod(buf, NULL);
    }
    return (double)f;
}

void p4j_floats_as_printed(const float *src, double *dst, size_t n)
{
    size_t i = 0;
    while (i < n && printed_exactly(src[i])) {
        dst[i] = (double)src[i];
        i++;
    }
    if (i == n)
        return;
    p4j_float_printer printer = __atomic_load_n(&float_printer, __ATOMIC_ACQUIRE);
    if (printer && printer(src + i, dst + i, n - i))
        return;
    for (; i < n; i++)
        dst[i] = printed_exactly(src[i]) ? (double)src[i] : shortest(src[i]);
}

double p4j_float_as_printed(float f)
{
    double d;
    p4j_floats_as_printed(&f, &d, 1);
    return d;
}
