#ifndef MALLOC_COUNTER_H
#define MALLOC_COUNTER_H

/// Heap allocations made by this process so far (every malloc, calloc, realloc and
/// aligned allocation), when the counting allocator is linked in (glibc only).
long malloc_counter_allocations(void);

/// Bytes currently allocated on the heap, as malloc_usable_size counts them.
long malloc_counter_live_bytes(void);

/// The most bytes allocated at once since the last malloc_counter_reset_peak().
long malloc_counter_peak_bytes(void);

/// Starts a new peak from the bytes allocated now.
void malloc_counter_reset_peak(void);

/// Turns the byte counts (live and peak) off (0) or on (1). Counting bytes asks
/// malloc_usable_size on every malloc and free, which timed code should not pay for; the
/// live count is meaningless after a period off.
void malloc_counter_count_bytes(int on);
/// Turns the allocation count off (0) or on (1): off, malloc and free only forward to
/// glibc's (a load timed with counting off pays no atomic add an allocation).
void malloc_counter_count_allocations(int on);

/// 1 when allocations are being counted (glibc), 0 when the counters stay at zero.
int malloc_counter_enabled(void);

#endif
