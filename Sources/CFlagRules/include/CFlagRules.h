#ifndef CFLAGRULES_H
#define CFLAGRULES_H

// Two operations FlagRules' string tables need and Swift does not express: comparing a
// cache line of slots with one branch-free vector compare, and prefetching a line. Both
// are small inline functions, inlined into the Swift that calls them.

#include <stdint.h>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

/// The index (0-7) of the slot among the eight at `line` that equals `word`, or 8 when
/// none does (a line holds a word at most once). `line` is 16-byte aligned. No branch
/// depends on which slot matched: that slot is random, and a branch on it would be
/// mispredicted on most hits.
static inline __attribute__((always_inline, pure)) int flagrules_line_index(const uint64_t *line, uint64_t word) {
#if defined(__SSE2__)
    // Each 32-bit half compared: two mask bits a slot, both set when the slot is equal.
    const __m128i w = _mm_set1_epi64x((long long)word);
    unsigned halves = 0;
    for (int i = 0; i < 4; i++) {
        __m128i equal = _mm_cmpeq_epi32(_mm_load_si128((const __m128i *)(line + 2 * i)), w);
        halves |= (unsigned)_mm_movemask_ps(_mm_castsi128_ps(equal)) << (4 * i);
    }
    unsigned slots = halves & (halves >> 1) & 0x5555u;
    return __builtin_ctz(slots | 0x10000u) >> 1;
#else
    unsigned mask = 0;
    for (int i = 0; i < 8; i++) mask |= (unsigned)(line[i] == word) << i;
    return __builtin_ctz(mask | 0x100u);
#endif
}

/// A bit for each of the four 16-byte slots at `line` whose words, the low one masked by
/// `low_mask`, are `low` and `high` (bit i for slot i). `line` is 16-byte aligned.
static inline __attribute__((always_inline, pure)) unsigned flagrules_wide_line_matches(const uint64_t *line, uint64_t low, uint64_t high, uint64_t low_mask) {
#if defined(__SSE2__)
    // Four mask bits a slot, all set when the slot is equal.
    const __m128i key = _mm_set_epi64x((long long)high, (long long)low);
    const __m128i mask = _mm_set_epi64x(-1, (long long)low_mask);
    unsigned quarters = 0;
    for (int i = 0; i < 4; i++) {
        __m128i slot = _mm_and_si128(_mm_load_si128((const __m128i *)(line + 2 * i)), mask);
        quarters |= (unsigned)_mm_movemask_ps(_mm_castsi128_ps(_mm_cmpeq_epi32(slot, key))) << (4 * i);
    }
    quarters &= (quarters >> 1) & (quarters >> 2) & (quarters >> 3) & 0x1111u;
    // Bit 4i to bit i.
    return (quarters | quarters >> 3 | quarters >> 6 | quarters >> 9) & 0xFu;
#else
    unsigned matches = 0;
    for (int i = 0; i < 4; i++) matches |= (unsigned)((line[2 * i] & low_mask) == low && line[2 * i + 1] == high) << i;
    return matches;
#endif
}

/// The index (0-3) of the 16-byte slot among the four at `line` whose words are `low` and
/// `high`, or 4 when none is (a line holds a key at most once). `line` is 16-byte aligned.
/// As above, no branch depends on which slot matched.
static inline __attribute__((always_inline, pure)) int flagrules_wide_line_index(const uint64_t *line, uint64_t low, uint64_t high) {
    return __builtin_ctz(flagrules_wide_line_matches(line, low, high, ~(uint64_t)0) | 0x10u);
}

/// Starts reading the cache line at `p` for a load soon after, without waiting for it,
/// and returns `p`. Declared pure, so that Swift sees no side effect to order other work
/// around (which made it copy values at the call); the caller reads the line through the
/// pointer returned, so the call is not dropped as unused.
static inline __attribute__((always_inline, pure)) const uint64_t *flagrules_prefetch(const uint64_t *p) {
    __builtin_prefetch(p, 0, 3);
    return p;
}

/// `x`, as a value whose origin the optimiser cannot see, so that a branch on something
/// computed from it is not split into branches on what that was computed from (a lookup's
/// rare branch would become a branch on its answer). Declared const: Swift then sees no
/// side effect, and keeps no copy of a value alive across it.
static inline __attribute__((always_inline, const)) uint64_t flagrules_opaque(uint64_t x) {
#if defined(__GNUC__)
    __asm__("" : "+r"(x));
#endif
    return x;
}

#endif
