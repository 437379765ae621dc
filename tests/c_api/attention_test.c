/* tests/c_api/attention_test.c — tessel_attention on the host against a
 * float64 reference: [batch, seq, heads, head_dim] storage given with null
 * strides and [batch, heads, seq, head_dim] storage given as permuted
 * strides, grouped- and multi-query heads, causal (with q_len > kv_len, so
 * that some rows see no key) and not, default and explicit scale, the
 * log-sum-exp packed and transposed, fp32 / fp16 / bf16, both kernel paths,
 * explicit thread counts. Sizes and values are drawn from the run seed.
 * Where a CUDA device is present (device.h) every 16-bit case runs once more
 * on device copies of the same buffers, on a stream of its own (fp32
 * attention is CPU-only). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "device.h"
#include "groups.h"
#include "reference.h"

typedef struct attention_case {
  const char* name;
  int32_t dtype;
  int64_t heads, kv_heads, head_dim;
  int causal;
  double scale;      /* 0: 1/sqrt(head_dim) */
  int bhsd;          /* stored [batch, heads, seq, head_dim] */
  int lse_transposed; /* lse stored [batch, q_len, heads] */
  int32_t path, threads;
} attention_case;

/* A [B, S, H, D] view over a fresh buffer, stored as [B, S, H, D] or [B, H, S, D]. */
static void bshd(view* v, buffer* b, int32_t dtype, int64_t B, int64_t S, int64_t H, int64_t D, int bhsd) {
  *b = buffer_new(dtype, B * S * H * D);
  const int64_t shape[4] = {B, S, H, D}, permuted[4] = {H * S * D, D, S * D, 1};
  view_init(v, b, 4, shape, bhsd ? permuted : NULL);
}

static double tolerance(int32_t dtype) {
  return dtype == TESSEL_DTYPE_BF16 ? 1e-2 : dtype == TESSEL_DTYPE_F16 ? 2e-3 : 1e-5;
}

/* Rows without keys must be -inf in both; they then count as equal (0). */
static double lse_error(double* got, double* want, int64_t n, int* inf_mismatch) {
  for (int64_t i = 0; i < n; ++i) {
    const int gi = isinf(got[i]) && got[i] < 0, wi = isinf(want[i]) && want[i] < 0;
    if (gi != wi) ++*inf_mismatch;
    if (gi && wi) got[i] = want[i] = 0;
  }
  return relative_error(got, want, n);
}

static void run(const attention_case* ac, int device) {
  rng r = case_rng(ac->name);
  const int64_t B = uniform_int(&r, 1, 2), Lq = uniform_int(&r, 1, 80), Lk = uniform_int(&r, 1, 80);
  const int64_t H = ac->heads, Hk = ac->kv_heads, D = ac->head_dim;
  view q, k, v, out, lse;
  buffer bufs[5]; /* q, k, v, out, lse */
  bshd(&q, &bufs[0], ac->dtype, B, Lq, H, D, ac->bhsd);
  bshd(&k, &bufs[1], ac->dtype, B, Lk, Hk, D, ac->bhsd);
  bshd(&v, &bufs[2], ac->dtype, B, Lk, Hk, D, ac->bhsd);
  bshd(&out, &bufs[3], ac->dtype, B, Lq, H, D, ac->bhsd);
  bufs[4] = buffer_new(TESSEL_DTYPE_F32, B * H * Lq);
  const int64_t lse_shape[3] = {B, H, Lq}, lse_strides[3] = {Lq * H, 1, H};
  view_init(&lse, &bufs[4], 3, lse_shape, ac->lse_transposed ? lse_strides : NULL);
  for (int i = 0; i < 3; ++i) fill_random(&bufs[i], &r, i == 2 ? 2.0 : 1.0);
  fill_value(&bufs[3], 7.0);

  const int64_t n_out = B * Lq * H * D, n_lse = B * H * Lq;
  double* want = malloc(sizeof(double) * (size_t)(n_out + n_lse));
  double* got = malloc(sizeof(double) * (size_t)(n_out + n_lse));
  if (!want || !got) exit(2);
  reference_attention(&q, &k, &v, ac->causal, (float)ac->scale, want, want + n_out);
  const char* where = device ? " on cuda" : "";
  view* all[5] = {&q, &k, &v, &out, &lse};
  tessel_status s = TESSEL_ERROR_DEVICE;
  int placed = 0;
  while (device && placed < 5 && device_put(all[placed])) ++placed;
  if (!device || placed == 5)
    s = tessel_attention(&q.t, &k.t, &v.t, &out.t, &lse.t, ac->causal, (float)ac->scale, ac->path, ac->threads,
                         device ? device_stream() : NULL);
  for (int i = 0; i < placed; ++i) device_get(all[i]);
  check(s == TESSEL_OK, "attention %s%s (B=%lld Lq=%lld Lk=%lld): status %s: %s", ac->name, where, (long long)B,
        (long long)Lq, (long long)Lk, tessel_status_name(s), tessel_last_error());
  for (int64_t b = 0, i = 0; b < B; ++b)
    for (int64_t t = 0; t < Lq; ++t)
      for (int64_t h = 0; h < H; ++h)
        for (int64_t d = 0; d < D; ++d, ++i) {
          const int64_t idx[4] = {b, t, h, d};
          got[i] = view_get(&out, idx);
        }
  for (int64_t b = 0, i = n_out; b < B; ++b)
    for (int64_t h = 0; h < H; ++h)
      for (int64_t t = 0; t < Lq; ++t, ++i) {
        const int64_t idx[3] = {b, h, t};
        got[i] = view_get(&lse, idx);
      }
  const double err = relative_error(got, want, n_out);
  int inf_mismatch = 0;
  const double lerr = lse_error(got + n_out, want + n_out, n_lse, &inf_mismatch);
  check(err <= tolerance(ac->dtype), "attention %s%s (B=%lld Lq=%lld Lk=%lld): out relative error %.3g > %.3g",
        ac->name, where, (long long)B, (long long)Lq, (long long)Lk, err, tolerance(ac->dtype));
  check(lerr <= 1e-5 && inf_mismatch == 0, "attention %s%s (B=%lld Lq=%lld Lk=%lld): lse relative error %.3g, %d "
        "rows -inf in one and not the other", ac->name, where, (long long)B, (long long)Lq, (long long)Lk, lerr,
        inf_mismatch);
  printf("  attention %-26s%-8s B=%lld Lq=%-3lld Lk=%-3lld out error %.2e, lse error %.2e\n", ac->name, where,
         (long long)B, (long long)Lq, (long long)Lk, err, lerr);
  free(want);
  free(got);
  for (int i = 0; i < 5; ++i) buffer_free(&bufs[i]);
}

void attention_tests(void) {
  enum { F32 = TESSEL_DTYPE_F32, F16 = TESSEL_DTYPE_F16, BF16 = TESSEL_DTYPE_BF16 };
  const attention_case cases[] = {
      /* name, dtype, heads, kv_heads, head_dim, causal, scale, bhsd, lse_transposed, path, threads */
      {"f32 gqa", F32, 4, 2, 64, 0, 0.0, 0, 0, TESSEL_PATH_FASTEST, 1},
      {"f32 mqa causal bhsd hd128", F32, 3, 1, 128, 1, 0.3, 1, 1, TESSEL_PATH_FASTEST, 0},
      {"f32 causal portable", F32, 2, 2, 64, 1, 0.0, 0, 1, TESSEL_PATH_PORTABLE, 2},
      {"bf16 causal gqa bhsd", BF16, 4, 2, 64, 1, 0.0, 1, 0, TESSEL_PATH_FASTEST, 2},
      {"f16 scale hd128", F16, 2, 1, 128, 0, 0.05, 0, 0, TESSEL_PATH_FASTEST, 1},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; ++i) run(&cases[i], 0);
  for (size_t i = 0; device_available() && i < sizeof cases / sizeof cases[0]; ++i)
    if (cases[i].dtype != F32) run(&cases[i], 1);
}
