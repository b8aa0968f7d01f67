// A counting allocator for the benchmark: it defines malloc and friends in the
// executable, which the dynamic linker prefers over libc's for every library in the
// process, counts each call, and forwards to glibc's own implementation.
#include "MallocCounter.h"
#include <stddef.h>
#if defined(__linux__)
#include <features.h>
#endif

#if defined(__linux__) && defined(__GLIBC__)
#include <errno.h>
#include <malloc.h>
#include <stdatomic.h>

extern void *__libc_malloc(size_t size);
extern void *__libc_calloc(size_t count, size_t size);
extern void *__libc_realloc(void *pointer, size_t size);
extern void *__libc_memalign(size_t alignment, size_t size);
extern void __libc_free(void *pointer);

static atomic_long allocations = 0;
static atomic_long live_bytes = 0;
static atomic_long peak_bytes = 0;
static atomic_int counting_bytes = 1;
static atomic_int counting_allocations = 1;

/// Raises the peak to `live` if that is higher. A plain store, not a compare-and-swap, so
/// that counting costs the load it measures as little as possible; two threads allocating
/// at the same instant can leave the peak a little low.
static void note_live(long live) {
    if (live > atomic_load_explicit(&peak_bytes, memory_order_relaxed)) atomic_store_explicit(&peak_bytes, live, memory_order_relaxed);
}

static void *counted(void *pointer) {
    if (pointer && atomic_load_explicit(&counting_allocations, memory_order_relaxed)) {
        atomic_fetch_add_explicit(&allocations, 1, memory_order_relaxed);
        if (atomic_load_explicit(&counting_bytes, memory_order_relaxed)) {
            long size = (long)malloc_usable_size(pointer);
            note_live(atomic_fetch_add_explicit(&live_bytes, size, memory_order_relaxed) + size);
        }
    }
    return pointer;
}

void *malloc(size_t size) { return counted(__libc_malloc(size)); }
void *calloc(size_t count, size_t size) { return counted(__libc_calloc(count, size)); }

void free(void *pointer) {
    if (pointer && atomic_load_explicit(&counting_bytes, memory_order_relaxed)) {
        atomic_fetch_sub_explicit(&live_bytes, (long)malloc_usable_size(pointer), memory_order_relaxed);
    }
    __libc_free(pointer);
}

void *realloc(void *pointer, size_t size) {
    int counting = atomic_load_explicit(&counting_bytes, memory_order_relaxed);
    long before = pointer && counting ? (long)malloc_usable_size(pointer) : 0;
    void *result = __libc_realloc(pointer, size);
    if (result) {
        if (atomic_load_explicit(&counting_allocations, memory_order_relaxed)) atomic_fetch_add_explicit(&allocations, 1, memory_order_relaxed);
        if (counting) {
            long change = (long)malloc_usable_size(result) - before;
            note_live(atomic_fetch_add_explicit(&live_bytes, change, memory_order_relaxed) + change);
        }
    } else if (size == 0 && pointer && counting) {
        atomic_fetch_sub_explicit(&live_bytes, before, memory_order_relaxed);
    }
    return result;
}

void *memalign(size_t alignment, size_t size) { return counted(__libc_memalign(alignment, size)); }
void *aligned_alloc(size_t alignment, size_t size) { return counted(__libc_memalign(alignment, size)); }

int posix_memalign(void **out, size_t alignment, size_t size) {
    void *pointer = counted(__libc_memalign(alignment, size));
    if (!pointer) return ENOMEM;
    *out = pointer;
    return 0;
}

long malloc_counter_allocations(void) { return atomic_load_explicit(&allocations, memory_order_relaxed); }
long malloc_counter_live_bytes(void) { return atomic_load_explicit(&live_bytes, memory_order_relaxed); }
long malloc_counter_peak_bytes(void) { return atomic_load_explicit(&peak_bytes, memory_order_relaxed); }
void malloc_counter_reset_peak(void) { atomic_store_explicit(&peak_bytes, atomic_load_explicit(&live_bytes, memory_order_relaxed), memory_order_relaxed); }
void malloc_counter_count_bytes(int on) { atomic_store_explicit(&counting_bytes, on, memory_order_relaxed); }
void malloc_counter_count_allocations(int on) { atomic_store_explicit(&counting_allocations, on, memory_order_relaxed); }
int malloc_counter_enabled(void) { return 1; }

#else

long malloc_counter_allocations(void) { return 0; }
long malloc_counter_live_bytes(void) { return 0; }
long malloc_counter_peak_bytes(void) { return 0; }
void malloc_counter_reset_peak(void) {}
void malloc_counter_count_bytes(int on) { (void)on; }
void malloc_counter_count_allocations(int on) { (void)on; }
int malloc_counter_enabled(void) { return 0; }

#endif
