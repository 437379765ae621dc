/* tests/c_api/harness.c — checks, seed, buffers and snapshots (harness.h). */
#include "harness.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static int n_checks, n_failures;

void check(int ok, const char* what, ...) {
  ++n_checks;
  if (ok) return;
  ++n_failures;
  va_list args;
  va_start(args, what);
  printf("FAIL (TESSEL_SEED=%llu): ", (unsigned long long)run_seed());
  vprintf(what, args);
  printf("\n");
  va_end(args);
}
int failures(void) { return n_failures; }
int checks(void) { return n_checks; }

/* splitmix64: a full-period 64-bit generator, good enough for test inputs. */
static uint64_t next(rng* r) {
  uint64_t z = (r->state += 0x9e3779b97f4a7c15ull);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

uint64_t run_seed(void) {
  static uint64_t seed;
  static int known;
  if (!known) {
    const char* s = getenv("TESSEL_SEED");
    if (s) {
      seed = strtoull(s, NULL, 0);
    } else {
      struct timespec ts;
      timespec_get(&ts, TIME_UTC);
      rng r = {(uint64_t)ts.tv_sec * 1000000007ull ^ (uint64_t)ts.tv_nsec ^ ((uint64_t)(uintptr_t)&ts << 16)};
      seed = next(&r);
    }
    known = 1;
  }
  return seed;
}

rng case_rng(const char* case_name) {
  uint64_t h = 1469598103934665603ull; /* FNV-1a of the name, mixed with the run seed */
  for (const char* p = case_name; *p; ++p) h = (h ^ (unsigned char)*p) * 1099511628211ull;
  rng r = {run_seed() ^ h};
  next(&r);
  return r;
}

int64_t uniform_int(rng* r, int64_t lo, int64_t hi) { return lo + (int64_t)(next(r) % (uint64_t)(hi - lo + 1)); }

double uniform_real(rng* r, double magnitude) { return ((double)(next(r) >> 11) * 0x1p-52 - 1.0) * magnitude; }

static size_t element_size(int32_t dtype) { return dtype == TESSEL_DTYPE_F32 ? 4 : 2; }

buffer buffer_new(int32_t dtype, int64_t elements) {
  buffer b = {calloc((size_t)(elements > 0 ? elements : 1), element_size(dtype)), elements, dtype};
  if (!b.data) {
    printf("out of memory for %lld elements\n", (long long)elements);
    exit(2);
  }
  return b;
}
size_t buffer_bytes(const buffer* b) { return (size_t)(b->elements > 0 ? b->elements : 1) * element_size(b->dtype); }
void buffer_free(buffer* b) {
  free(b->data);
  b->data = NULL;
}

static uint32_t float_bits(float f) {
  uint32_t u;
  memcpy(&u, &f, 4);
  return u;
}
static float bits_float(uint32_t u) {
  float f;
  memcpy(&f, &u, 4);
  return f;
}

static double fp16_value(uint16_t h) {
  const int exponent = (h >> 10) & 0x1f, mantissa = h & 0x3ff;
  const double sign = (h & 0x8000) ? -1.0 : 1.0;
  if (exponent == 0x1f) return mantissa ? NAN : sign * INFINITY;
  if (exponent == 0) return sign * ldexp(mantissa, -24);
  return sign * ldexp(1024 + mantissa, exponent - 25);
}

/* value (exact in fp32) as fp16 bits; a value that is not exact in fp16 stops the test. */
static uint16_t fp16_bits(float value) {
  const uint32_t u = float_bits(value), sign = (u >> 16) & 0x8000u;
  if ((u & 0x7fffffffu) == 0) return (uint16_t)sign;
  const int exponent = (int)((u >> 23) & 0xff) - 127 + 15;
  if (exponent < 1 || exponent > 30 || (u & 0x1fffu)) {
    printf("test bug: %g is not a normal fp16 value\n", value);
    exit(2);
  }
  return (uint16_t)(sign | ((uint32_t)exponent << 10) | ((u >> 13) & 0x3ffu));
}

double get(const buffer* b, int64_t offset) {
  switch (b->dtype) {
    case TESSEL_DTYPE_F32: return ((const float*)b->data)[offset];
    case TESSEL_DTYPE_F16: return fp16_value(((const uint16_t*)b->data)[offset]);
    default: return bits_float((uint32_t)((const uint16_t*)b->data)[offset] << 16);
  }
}

void put(buffer* b, int64_t offset, double value) {
  const float f = (float)value;
  if (b->dtype == TESSEL_DTYPE_F32) {
    ((float*)b->data)[offset] = f;
  } else if (b->dtype == TESSEL_DTYPE_F16) {
    ((uint16_t*)b->data)[offset] = fp16_bits(f);
  } else {
    if (float_bits(f) & 0xffffu) {
      printf("test bug: %g is not a bf16 value\n", value);
      exit(2);
    }
    ((uint16_t*)b->data)[offset] = (uint16_t)(float_bits(f) >> 16);
  }
}

void fill_random(buffer* b, rng* r, double magnitude) {
  const int64_t steps = (int64_t)(magnitude * 64);
  for (int64_t i = 0; i < b->elements; ++i)
    put(b, i, b->dtype == TESSEL_DTYPE_F32 ? uniform_real(r, magnitude) : (double)uniform_int(r, -steps, steps) / 64);
}
void fill_value(buffer* b, double value) {
  for (int64_t i = 0; i < b->elements; ++i) put(b, i, value);
}

void view_init(view* v, buffer* b, int32_t rank, const int64_t* shape, const int64_t* strides) {
  int64_t packed = 1;
  for (int d = rank - 1; d >= 0; --d) {
    v->shape[d] = shape[d];
    v->strides[d] = strides ? strides[d] : packed;
    packed *= shape[d];
  }
  tessel_tensor t = {b->data, v->shape, v->strides, b->dtype, rank, TESSEL_DEVICE_HOST, 0};
  v->buf = b;
  v->t = t;
}

int64_t view_offset(const view* v, const int64_t* idx) {
  int64_t o = 0;
  for (int d = 0; d < v->t.rank; ++d) o += idx[d] * v->strides[d];
  return o;
}

double view_get(const view* v, const int64_t* idx) { return get(v->buf, view_offset(v, idx)); }

snapshot snapshot_take(const buffer* b) {
  const size_t bytes = buffer_bytes(b);
  snapshot s = {malloc(bytes), b};
  if (!s.copy) exit(2);
  memcpy(s.copy, b->data, bytes);
  return s;
}
int snapshot_unchanged(const snapshot* s) {
  const size_t bytes = (size_t)(s->of->elements > 0 ? s->of->elements : 1) * element_size(s->of->dtype);
  return memcmp(s->copy, s->of->data, bytes) == 0;
}
int snapshot_unchanged_outside(const snapshot* s, const view* v) {
  const int64_t n = s->of->elements;
  const size_t size = element_size(s->of->dtype);
  char* covered = calloc((size_t)(n > 0 ? n : 1), 1);
  if (!covered) exit(2);
  int64_t idx[TESSEL_MAX_RANK] = {0}, total = 1;
  for (int d = 0; d < v->t.rank; ++d) total *= v->shape[d];
  for (int64_t e = 0; e < total; ++e) { /* every index of v, last dimension fastest */
    covered[view_offset(v, idx)] = 1;
    for (int d = v->t.rank - 1; d >= 0 && ++idx[d] == v->shape[d]; --d) idx[d] = 0;
  }
  int same = 1;
  for (int64_t i = 0; i < n; ++i)
    if (!covered[i] && memcmp((const char*)s->copy + i * size, (const char*)s->of->data + i * size, size)) same = 0;
  free(covered);
  return same;
}

void snapshot_free(snapshot* s) {
  free(s->copy);
  s->copy = NULL;
}

double relative_error(const double* got, const double* want, int64_t n) {
  double diff = 0, norm = 0;
  for (int64_t i = 0; i < n; ++i) {
    diff += (got[i] - want[i]) * (got[i] - want[i]);
    norm += want[i] * want[i];
  }
  if (diff != diff) return INFINITY; /* NaN anywhere fails */
  return norm > 0 ? sqrt(diff / norm) : sqrt(diff);
}

int message_has(const char* phrase) { return strstr(tessel_last_error(), phrase) != NULL; }
