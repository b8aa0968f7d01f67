#ifndef FLAGRULES_ATOMICS_H
#define FLAGRULES_ATOMICS_H

// Atomic loads and stores, for values that hot paths read on every call and that change
// rarely: whether any override scope has been entered, a store's generation of rules in
// force. Swift's own atomics need macOS 15 and iOS 18; these compile to plain moves.

/// Reads *p atomically (acquire).
static inline int flagrules_atomic_load(const int *p) { return __atomic_load_n(p, __ATOMIC_ACQUIRE); }

/// Writes value to *p atomically (release).
static inline void flagrules_atomic_store(int *p, int value) { __atomic_store_n(p, value, __ATOMIC_RELEASE); }

/// Reads *p atomically (acquire).
static inline long flagrules_atomic_load_long(const long *p) { return __atomic_load_n(p, __ATOMIC_ACQUIRE); }

/// Writes value to *p atomically (release).
static inline void flagrules_atomic_store_long(long *p, long value) { __atomic_store_n(p, value, __ATOMIC_RELEASE); }

#endif
