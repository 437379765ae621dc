/* tests/c_api/reference.c — the float64 oracle (reference.h). */
#include "reference.h"

#include <math.h>
#include <stdlib.h>

/* op(X)[e, row, col] of a rank-2 or rank-3 view. */
static double op_at(const view* x, int trans, int64_t e, int64_t row, int64_t col) {
  const int r = x->t.rank;
  int64_t idx[3];
  int d = 0;
  if (r == 3) idx[d++] = x->shape[0] == 1 ? 0 : e;
  idx[d++] = trans ? col : row;
  idx[d] = trans ? row : col;
  return view_get(x, idx);
}

void reference_gemm(const view* a, const view* b, const view* c, double alpha, double beta, int trans_a, int trans_b,
                    double* want) {
  const int r = c->t.rank;
  const int64_t batch = r == 3 ? c->shape[0] : 1, M = c->shape[r - 2], N = c->shape[r - 1];
  const int64_t K = trans_a ? a->shape[a->t.rank - 2] : a->shape[a->t.rank - 1];
  for (int64_t e = 0; e < batch; ++e)
    for (int64_t i = 0; i < M; ++i)
      for (int64_t j = 0; j < N; ++j) {
        double sum = 0;
        for (int64_t p = 0; p < K; ++p) sum += op_at(a, trans_a, e, i, p) * op_at(b, trans_b, e, p, j);
        double value = alpha * sum;
        if (beta != 0) value += beta * op_at(c, 0, e, i, j);
        want[(e * M + i) * N + j] = value;
      }
}

/* One query row: scores of the keys it sees, their softmax, the weighted values. */
static void attention_row(const view* q, const view* k, const view* v, int causal, double scale, int64_t b,
                          int64_t i, int64_t h, double* scores, double* out_row, double* lse) {
  const int64_t Lq = q->shape[1], Lk = k->shape[1], H = q->shape[2], D = q->shape[3];
  const int64_t hk = h / (H / k->shape[2]);
  int64_t visible = causal ? i + Lk - Lq + 1 : Lk; /* causal: keys j <= i + Lk - Lq */
  if (visible < 0) visible = 0;
  if (visible > Lk) visible = Lk;
  double max = -INFINITY;
  for (int64_t j = 0; j < visible; ++j) {
    double s = 0;
    for (int64_t d = 0; d < D; ++d) {
      const int64_t qi[4] = {b, i, h, d}, ki[4] = {b, j, hk, d};
      s += view_get(q, qi) * view_get(k, ki);
    }
    scores[j] = s * scale;
    if (scores[j] > max) max = scores[j];
  }
  for (int64_t d = 0; d < D; ++d) out_row[d] = 0;
  if (visible == 0) {
    *lse = -INFINITY;
    return;
  }
  double sum = 0;
  for (int64_t j = 0; j < visible; ++j) {
    const double p = exp(scores[j] - max);
    sum += p;
    for (int64_t d = 0; d < D; ++d) {
      const int64_t vi[4] = {b, j, hk, d};
      out_row[d] += p * view_get(v, vi);
    }
  }
  for (int64_t d = 0; d < D; ++d) out_row[d] /= sum;
  *lse = max + log(sum);
}

void reference_attention(const view* q, const view* k, const view* v, int causal, double scale, double* want_out,
                         double* want_lse) {
  const int64_t B = q->shape[0], Lq = q->shape[1], H = q->shape[2], D = q->shape[3];
  if (scale == 0) scale = 1.0 / sqrt((double)D);
  double* scores = malloc(sizeof(double) * (size_t)(k->shape[1] > 0 ? k->shape[1] : 1));
  if (!scores) exit(2);
  for (int64_t b = 0; b < B; ++b)
    for (int64_t i = 0; i < Lq; ++i)
      for (int64_t h = 0; h < H; ++h)
        attention_row(q, k, v, causal, scale, b, i, h, scores, want_out + ((b * Lq + i) * H + h) * D,
                      want_lse + (b * H + h) * Lq + i);
  free(scores);
}
