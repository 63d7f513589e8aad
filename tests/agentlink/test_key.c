/* test_key.c -- keys derived from raw tool call ids. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>
#include <errno.h>

#include "agentlink/agentlink.h"
#include "agentlink/internal.h" /* al_sha256_hex */

#define EXPECT_A_SLASH_B "c14cddc033f64b9d"

static char *derive(const void *raw, size_t len)
{
    char *k = NULL;
    assert_int_equal(al_key_derive(raw, len, &k), 0);
    assert_non_null(k);
    /* Whatever the input, the result is a valid key. */
    assert_int_equal(al_key_check(k), 0);
    return k;
}

static int is_derived_form(const char *k)
{
    size_t n = strlen(k);
    if (n < AL_KEY_HASH_LEN || k[n - AL_KEY_HASH_LEN] != '~')
        return 0;
    return strspn(k + n - 16, "0123456789abcdef") == 16;
}

static void sha256_should_match_fips_vectors(void **state)
{
    char hex[65];
    (void)state;
    al_sha256_hex("", 0, hex);
    assert_string_equal(hex, "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
    al_sha256_hex("abc", 3, hex);
    assert_string_equal(hex, "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
    al_sha256_hex("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq", 56, hex);
    assert_string_equal(hex, "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
}

static void key_derive_should_keep_valid_ids(void **state)
{
    const char *ids[] = {"call_abc123", "toolu_01A09q90qw90lq917835lq9",
                         "id with spaces", "ключ-ü", "a~b", "x~0123"};
    (void)state;
    for (size_t i = 0; i < sizeof ids / sizeof ids[0]; i++) {
        char *k = derive(ids[i], strlen(ids[i]));
        assert_string_equal(k, ids[i]);
        al_free(k);
    }
}

static void key_derive_should_keep_ids_of_200_bytes_and_hash_201(void **state)
{
    char raw[202];
    char *k;
    (void)state;
    memset(raw, 'a', sizeof raw);
    k = derive(raw, 200);
    assert_int_equal(strlen(k), 200);
    assert_memory_equal(k, raw, 200);
    al_free(k);
    k = derive(raw, 201);
    assert_true(is_derived_form(k));
    assert_int_equal(strlen(k), AL_KEY_PREFIX_MAX + AL_KEY_HASH_LEN);
    al_free(k);
}

static void key_derive_should_replace_slashes_and_controls(void **state)
{
    char *k;
    (void)state;
    k = derive("a/b\tc\x01" "d", 7);
    assert_true(is_derived_form(k));
    assert_memory_equal(k, "a_b_c_d~", 8);
    al_free(k);
}

static void key_derive_should_never_escape_the_directory(void **state)
{
    const char *ids[] = {"..", ".", "../../etc/passwd", "/", ".hidden", "...x"};
    (void)state;
    for (size_t i = 0; i < sizeof ids / sizeof ids[0]; i++) {
        char *k = derive(ids[i], strlen(ids[i]));
        assert_null(strchr(k, '/'));
        assert_true(k[0] != '.');
        assert_true(is_derived_form(k));
        al_free(k);
    }
    char *k = derive("../../etc/passwd", 16);
    assert_memory_equal(k, "_.._etc_passwd~", 15);
    al_free(k);
}

static void key_derive_should_be_deterministic(void **state)
{
    char *a, *b;
    (void)state;
    a = derive("a/b", 3);
    b = derive("a/b", 3);
    assert_string_equal(a, b);
    /* Pinned: keys must not change between versions, or pointers break.
     * sha256("a/b") starts c14cddc0 (python3 hashlib). */
    assert_string_equal(a, "a_b~" EXPECT_A_SLASH_B);
    al_free(a);
    al_free(b);
}

static void key_derive_should_separate_ids_that_sanitise_alike(void **state)
{
    char *a = derive("a/b", 3), *b = derive("a\x01" "b", 3), *c = derive("a b", 3);
    (void)state;
    /* "a b" is a valid key and kept as is; the others share the prefix "a_b"
     * but not the hash. */
    assert_string_equal(c, "a b");
    assert_memory_equal(a, "a_b~", 4);
    assert_memory_equal(b, "a_b~", 4);
    assert_string_not_equal(a, b);
    al_free(a);
    al_free(b);
    al_free(c);
}

static void key_derive_should_hash_ids_that_look_derived(void **state)
{
    char *a = derive("a/b", 3), *b;
    (void)state;
    /* A raw id equal to another id's derived key must not take that key. */
    b = derive(a, strlen(a));
    assert_string_not_equal(a, b);
    assert_true(is_derived_form(b));
    al_free(a);
    al_free(b);
}

static void key_derive_should_take_long_provider_ids(void **state)
{
    char raw[1536], raw2[1536];
    char *a, *b;
    (void)state;
    for (size_t i = 0; i < sizeof raw; i++)
        raw[i] = (char)('A' + (i % 26));
    memcpy(raw2, raw, sizeof raw);
    raw2[sizeof raw2 - 1] = '#'; /* differs only in the last byte */
    a = derive(raw, sizeof raw);
    b = derive(raw2, sizeof raw2);
    assert_true(strlen(a) <= AL_KEY_PREFIX_MAX + AL_KEY_HASH_LEN);
    assert_memory_equal(a, raw, AL_KEY_PREFIX_MAX);
    assert_string_not_equal(a, b);
    al_free(a);
    al_free(b);
}

static void key_derive_should_clip_on_a_character_boundary(void **state)
{
    /* 99 ASCII bytes then a 3-byte character: it would end at byte 102. */
    char raw[300];
    char *k;
    (void)state;
    memset(raw, 'x', 99);
    memcpy(raw + 99, "\xe2\x82\xac", 3); /* EURO SIGN */
    memset(raw + 102, 'y', 198);
    k = derive(raw, sizeof raw);
    assert_int_equal(strlen(k), 99 + AL_KEY_HASH_LEN);
    assert_int_equal(k[99], '~');
    al_free(k);
}

static void key_derive_should_replace_invalid_utf8_and_nul(void **state)
{
    char *k;
    (void)state;
    k = derive("ab\xff\xfe\0z", 6);
    assert_memory_equal(k, "ab___z~", 7);
    al_free(k);
}

static void key_derive_should_take_an_empty_id(void **state)
{
    char *k;
    (void)state;
    k = derive("", 0);
    assert_int_equal(k[0], '~');
    assert_int_equal(strlen(k), AL_KEY_HASH_LEN);
    assert_string_equal(k + 1, "e3b0c44298fc1c14");
    al_free(k);
}

static void key_derive_should_refuse_null_output(void **state)
{
    (void)state;
    assert_int_equal(al_key_derive("x", 1, NULL), EINVAL);
}

static void key_check_should_name_the_rule(void **state)
{
    (void)state;
    assert_int_equal(al_key_check("a/b"), AL_ENAME_SLASH);
    assert_int_equal(al_key_check(".x"), AL_ENAME_DOT);
    assert_int_equal(al_key_check(""), AL_ENAME_EMPTY);
    assert_int_equal(al_key_check("a\tb"), AL_ENAME_CTRL);
    assert_int_equal(al_key_check("a\xc3"), AL_ENAME_UTF8);
    assert_string_equal(al_strerror(AL_ENAME_SLASH), "contains '/'");
    assert_true(al_err_is_name(AL_ENAME_DOT));
    assert_false(al_err_is_name(AL_ENOTFOUND));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(sha256_should_match_fips_vectors),
        cmocka_unit_test(key_derive_should_keep_valid_ids),
        cmocka_unit_test(key_derive_should_keep_ids_of_200_bytes_and_hash_201),
        cmocka_unit_test(key_derive_should_replace_slashes_and_controls),
        cmocka_unit_test(key_derive_should_never_escape_the_directory),
        cmocka_unit_test(key_derive_should_be_deterministic),
        cmocka_unit_test(key_derive_should_separate_ids_that_sanitise_alike),
        cmocka_unit_test(key_derive_should_hash_ids_that_look_derived),
        cmocka_unit_test(key_derive_should_take_long_provider_ids),
        cmocka_unit_test(key_derive_should_clip_on_a_character_boundary),
        cmocka_unit_test(key_derive_should_replace_invalid_utf8_and_nul),
        cmocka_unit_test(key_derive_should_take_an_empty_id),
        cmocka_unit_test(key_derive_should_refuse_null_output),
        cmocka_unit_test(key_check_should_name_the_rule),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
