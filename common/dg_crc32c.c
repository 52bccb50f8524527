/*
 * dg_crc32c.c -- CRC-32C (see dg_crc32c.h): reflected polynomial
 * 0x82f63b78, slicing-by-8 tables built once, and on x86-64 the SSE 4.2
 * crc32 instruction when the CPU has it (checked at run time).
 */
#include "dg_crc32c.h"

#include <pthread.h>
#include <string.h>

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#define DG_CRC_HW 1
#include <nmmintrin.h>
#endif

static uint32_t table[8][256];
static int have_hw;
static pthread_once_t once = PTHREAD_ONCE_INIT;

static void init(void)
{
    for (uint32_t i = 0; i < 256; i++) {
        uint32_t c = i;
        for (int k = 0; k < 8; k++)
            c = (c >> 1) ^ (0x82f63b78u & (0u - (c & 1)));
        table[0][i] = c;
    }
    for (uint32_t i = 0; i < 256; i++)
        for (int t = 1; t < 8; t++)
            table[t][i] = (table[t - 1][i] >> 8) ^ table[0][table[t - 1][i] & 0xff];
#ifdef DG_CRC_HW
    __builtin_cpu_init();
    have_hw = __builtin_cpu_supports("sse4.2");
#endif
}

/* c is the inverted running CRC in both helpers */
static uint32_t crc_sw(uint32_t c, const unsigned char *p, size_t n)
{
    while (n && ((uintptr_t)p & 7)) {
        c = (c >> 8) ^ table[0][(c ^ *p++) & 0xff];
        n--;
    }
    while (n >= 8) {
        uint32_t lo, hi;
        memcpy(&lo, p, 4);
        memcpy(&hi, p + 4, 4);
        lo ^= c; /* little-endian byte order assumed (as the formats are) */
        c = table[7][lo & 0xff] ^ table[6][(lo >> 8) & 0xff] ^
            table[5][(lo >> 16) & 0xff] ^ table[4][lo >> 24] ^
            table[3][hi & 0xff] ^ table[2][(hi >> 8) & 0xff] ^
            table[1][(hi >> 16) & 0xff] ^ table[0][hi >> 24];
        p += 8;
        n -= 8;
    }
    while (n--)
        c = (c >> 8) ^ table[0][(c ^ *p++) & 0xff];
    return c;
}

#ifdef DG_CRC_HW
__attribute__((target("sse4.2")))
static uint32_t crc_hw(uint32_t c, const unsigned char *p, size_t n)
{
    uint64_t c64 = c;
    while (n >= 8) {
        uint64_t v;
        memcpy(&v, p, 8);
        c64 = _mm_crc32_u64(c64, v);
        p += 8;
        n -= 8;
    }
    c = (uint32_t)c64;
    while (n--)
        c = _mm_crc32_u8(c, *p++);
    return c;
}
#endif

uint32_t dg_crc32c(uint32_t crc, const void *p, size_t n)
{
    pthread_once(&once, init);
    uint32_t c = ~crc;
#ifdef DG_CRC_HW
    if (have_hw)
        return ~crc_hw(c, p, n);
#endif
    return ~crc_sw(c, p, n);
}

uint32_t dg_crc32c_mask(uint32_t crc)
{
    return ((crc >> 15) | (crc << 17)) + 0xa282ead8u;
}

uint32_t dg_crc32c_unmask(uint32_t masked)
{
    uint32_t r = masked - 0xa282ead8u;
    return (r >> 17) | (r << 15);
}
