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

static void *counted(void *pointer) {
    if (pointer) {
        atomic_fetch_add_explicit(&allocations, 1, memory_order_relaxed);
        atomic_fetch_add_explicit(&live_bytes, (long)malloc_usable_size(pointer), memory_order_relaxed);
    }
    return pointer;
}

void *malloc(size_t size) { return counted(__libc_malloc(size)); }
void *calloc(size_t count, size_t size) { return counted(__libc_calloc(count, size)); }

void free(void *pointer) {
    if (pointer) atomic_fetch_sub_explicit(&live_bytes, (long)malloc_usable_size(pointer), memory_order_relaxed);
    __libc_free(pointer);
}

void *realloc(void *pointer, size_t size) {
    long before = pointer ? (long)malloc_usable_size(pointer) : 0;
    void *result = __libc_realloc(pointer, size);
    if (result) {
        atomic_fetch_add_explicit(&allocations, 1, memory_order_relaxed);
        atomic_fetch_add_explicit(&live_bytes, (long)malloc_usable_size(result) - before, memory_order_relaxed);
    } else if (size == 0 && pointer) {
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
int malloc_counter_enabled(void) { return 1; }

#else

long malloc_counter_allocations(void) { return 0; }
long malloc_counter_live_bytes(void) { return 0; }
int malloc_counter_enabled(void) { return 0; }

#endif
