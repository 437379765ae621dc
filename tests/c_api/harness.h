/* tests/c_api/harness.h — what the C ABI's test (a C program) needs besides
 * the ABI: check counting, the run seed and a random generator, strided host
 * buffers of any tessel dtype, and a snapshot to prove that a refused call
 * wrote nothing.
 *
 * Contract: check() counts a check and prints one FAIL line (with the seed)
 * when it does not hold. The run seed is TESSEL_SEED if set (to replay), else
 * fresh; every case derives its own generator from it and its name. Values
 * stored with put() must be exactly representable in the buffer's dtype:
 * fill_random() draws any fp32 value for an fp32 buffer, and multiples of 1/64
 * with at most 8 significant bits (exact in fp16 and bf16) for the others;
 * get() decodes any value exactly.
 */
#ifndef TESSEL_TEST_C_API_HARNESS_H
#define TESSEL_TEST_C_API_HARNESS_H
#include <stddef.h>
#include <stdint.h>

#include <tessel/c_api.h>

/* ---- checks ---- */
void check(int ok, const char* what, ...);
int failures(void);
int checks(void);

/* ---- seed and random values ---- */
uint64_t run_seed(void);
typedef struct rng {
  uint64_t state;
} rng;
rng case_rng(const char* case_name);
int64_t uniform_int(rng* r, int64_t lo, int64_t hi); /* in [lo, hi] */
double uniform_real(rng* r, double magnitude);        /* in [-magnitude, magnitude] */

/* ---- host buffers: `elements` values of `dtype` ---- */
typedef struct buffer {
  void* data;
  int64_t elements;
  int32_t dtype;
} buffer;
buffer buffer_new(int32_t dtype, int64_t elements);
void buffer_free(buffer* b);
size_t buffer_bytes(const buffer* b); /* its storage: elements (at least one) times the dtype's size */
double get(const buffer* b, int64_t offset);
void put(buffer* b, int64_t offset, double value);
/* Values in [-magnitude, magnitude] (magnitude <= 2): any fp32 for fp32, i / 64 otherwise. */
void fill_random(buffer* b, rng* r, double magnitude);
void fill_value(buffer* b, double value);

/* A tessel_tensor over host buffer b; shape and strides (NULL: packed
 * row-major) are copied into the view, which must not be moved afterwards. */
typedef struct view {
  int64_t shape[TESSEL_MAX_RANK], strides[TESSEL_MAX_RANK];
  buffer* buf;
  tessel_tensor t;
} view;
void view_init(view* v, buffer* b, int32_t rank, const int64_t* shape, const int64_t* strides);
/* The element of v at index idx (rank values): its offset, its value. */
int64_t view_offset(const view* v, const int64_t* idx);
double view_get(const view* v, const int64_t* idx);

/* ---- snapshots ---- */
typedef struct snapshot {
  void* copy;
  const buffer* of;
} snapshot;
snapshot snapshot_take(const buffer* b);
int snapshot_unchanged(const snapshot* s); /* byte for byte */
/* Whether every element of the buffer that v does not cover is as in s. */
int snapshot_unchanged_outside(const snapshot* s, const view* v);
void snapshot_free(snapshot* s);

/* ---- errors ---- */
/* Normwise ||got - want|| / ||want|| over n values (||want|| = 0: the absolute norm). */
double relative_error(const double* got, const double* want, int64_t n);
/* Whether the calling thread's message contains `phrase`. */
int message_has(const char* phrase);

#endif
