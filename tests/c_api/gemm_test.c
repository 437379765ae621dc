/* tests/c_api/gemm_test.c — tessel_gemm on the host against a float64
 * reference: every transpose, row- and column-major storage through strides,
 * padded leading dimensions (and the padding left alone), null strides,
 * batches with a shared operand, alpha/beta, fp32 / fp16 / bf16 in and out,
 * both kernel paths, explicit thread counts. Sizes and values are drawn from
 * the run seed. Where a CUDA device is present (device.h) every case runs
 * once more on device copies of the same buffers, on a stream of its own. */
#include <stdio.h>
#include <stdlib.h>

#include "device.h"
#include "groups.h"
#include "reference.h"

typedef struct gemm_case {
  const char* name;
  int32_t in, out;
  int trans_a, trans_b;
  int a_col, b_col, c_col; /* column-major storage (strides [1, ld]) */
  int64_t pad;             /* leading dimension = rows or cols + pad */
  int64_t batch;           /* 0: rank 2; else a and c batched, b shared (batch extent 1) */
  double alpha, beta;
  int32_t path, threads;
  int zero_k;
} gemm_case;

/* A stored matrix [rows, cols] (or [batch, rows, cols]) over a fresh buffer of dtype. */
static void matrix(view* v, buffer* b, int32_t dtype, int64_t batch, int64_t rows, int64_t cols, int col_major,
                   int64_t pad) {
  const int64_t ld = (col_major ? rows : cols) + pad, span = (col_major ? cols : rows) * ld;
  *b = buffer_new(dtype, (batch ? batch : 1) * span);
  const int64_t shape[3] = {batch, rows, cols};
  const int64_t strides[3] = {span, col_major ? 1 : ld, col_major ? ld : 1};
  const int packed = !col_major && pad == 0; /* give these as NULL strides */
  view_init(v, b, batch ? 3 : 2, shape + (batch ? 0 : 1), packed ? NULL : strides + (batch ? 0 : 1));
}

static double tolerance(int32_t out) { return out == TESSEL_DTYPE_BF16 ? 8e-3 : out == TESSEL_DTYPE_F16 ? 2e-3 : 1e-5; }

static void run(const gemm_case* gc, int device) {
  rng r = case_rng(gc->name);
  const int64_t M = uniform_int(&r, 1, 70), N = uniform_int(&r, 1, 70), K = gc->zero_k ? 0 : uniform_int(&r, 1, 90);
  view a, b, c;
  buffer ab, bb, cb;
  matrix(&a, &ab, gc->in, gc->batch, gc->trans_a ? K : M, gc->trans_a ? M : K, gc->a_col, gc->pad);
  matrix(&b, &bb, gc->in, gc->batch ? 1 : 0, gc->trans_b ? N : K, gc->trans_b ? K : N, gc->b_col, gc->pad + 1);
  matrix(&c, &cb, gc->out, gc->batch, M, N, gc->c_col, gc->pad);
  fill_random(&ab, &r, 2.0);
  fill_random(&bb, &r, 2.0);
  fill_random(&cb, &r, 2.0); /* C before the call, padding included */
  const int64_t n = (gc->batch ? gc->batch : 1) * M * N;
  double* want = malloc(sizeof(double) * (size_t)n);
  double* got = malloc(sizeof(double) * (size_t)n);
  if (!want || !got) exit(2);
  reference_gemm(&a, &b, &c, gc->alpha, gc->beta, gc->trans_a, gc->trans_b, want);
  snapshot before = snapshot_take(&cb);

  const char* where = device ? " on cuda" : "";
  view* all[3] = {&a, &b, &c};
  tessel_status s = TESSEL_ERROR_DEVICE;
  int placed = 0;
  while (device && placed < 3 && device_put(all[placed])) ++placed;
  if (!device || placed == 3)
    s = tessel_gemm(&a.t, &b.t, &c.t, (float)gc->alpha, (float)gc->beta, gc->trans_a, gc->trans_b, gc->path,
                    gc->threads, device ? device_stream() : NULL);
  for (int i = 0; i < placed; ++i) device_get(all[i]);
  check(s == TESSEL_OK, "gemm %s%s (M=%lld N=%lld K=%lld): status %s: %s", gc->name, where, (long long)M,
        (long long)N, (long long)K, tessel_status_name(s), tessel_last_error());
  for (int64_t e = 0, i = 0; e < (gc->batch ? gc->batch : 1); ++e)
    for (int64_t row = 0; row < M; ++row)
      for (int64_t col = 0; col < N; ++col, ++i) {
        const int64_t idx3[3] = {e, row, col};
        got[i] = view_get(&c, gc->batch ? idx3 : idx3 + 1);
      }
  const double err = relative_error(got, want, n);
  check(err <= tolerance(gc->out), "gemm %s%s (M=%lld N=%lld K=%lld): relative error %.3g > %.3g", gc->name, where,
        (long long)M, (long long)N, (long long)K, err, tolerance(gc->out));
  check(snapshot_unchanged_outside(&before, &c), "gemm %s%s: wrote outside c (its padding)", gc->name, where);
  printf("  gemm %-28s%-8s M=%-3lld N=%-3lld K=%-3lld error %.2e\n", gc->name, where, (long long)M, (long long)N,
         (long long)K, err);
  snapshot_free(&before);
  free(want);
  free(got);
  buffer_free(&ab);
  buffer_free(&bb);
  buffer_free(&cb);
}

void gemm_tests(void) {
  enum { F32 = TESSEL_DTYPE_F32, F16 = TESSEL_DTYPE_F16, BF16 = TESSEL_DTYPE_BF16 };
  const gemm_case cases[] = {
      /* name, in, out, trans_a, trans_b, a_col, b_col, c_col, pad, batch, alpha, beta, path, threads, zero_k */
      {"f32 packed", F32, F32, 0, 0, 0, 0, 0, 0, 0, 1.0, 0.0, TESSEL_PATH_FASTEST, 1, 0},
      {"f32 trans_a alpha beta", F32, F32, 1, 0, 0, 0, 0, 0, 0, 0.5, -1.5, TESSEL_PATH_FASTEST, 0, 0},
      {"f32 trans_b col-major c", F32, F32, 0, 1, 0, 0, 1, 3, 0, -2.0, 0.25, TESSEL_PATH_FASTEST, 2, 0},
      {"f32 trans both padded", F32, F32, 1, 1, 0, 0, 0, 5, 0, 1.0, 1.0, TESSEL_PATH_FASTEST, 1, 0},
      {"f32 col-major a and b", F32, F32, 0, 0, 1, 1, 0, 2, 0, 1.0, 0.0, TESSEL_PATH_PORTABLE, 0, 0},
      {"f32 col-major a, trans_a", F32, F32, 1, 0, 1, 0, 1, 0, 0, 0.75, 0.0, TESSEL_PATH_FASTEST, 1, 0},
      {"bf16 -> f32 batch, shared b", BF16, F32, 0, 0, 0, 0, 0, 0, 3, 1.0, 0.5, TESSEL_PATH_FASTEST, 0, 0},
      {"bf16 -> bf16 trans_b", BF16, BF16, 0, 1, 0, 0, 0, 1, 0, 1.0, 0.0, TESSEL_PATH_FASTEST, 2, 0},
      {"f16 -> f16 portable", F16, F16, 1, 0, 0, 1, 0, 0, 2, 1.0, -1.0, TESSEL_PATH_PORTABLE, 2, 0},
      {"f16 -> f32 col-major c", F16, F32, 0, 0, 0, 0, 1, 4, 0, 2.0, 0.0, TESSEL_PATH_FASTEST, 0, 0},
      {"f32 K = 0: beta * C", F32, F32, 0, 0, 0, 0, 0, 0, 0, 1.0, 0.5, TESSEL_PATH_FASTEST, 1, 1},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; ++i) run(&cases[i], 0);
  for (size_t i = 0; device_available() && i < sizeof cases / sizeof cases[0]; ++i) run(&cases[i], 1);
}
