/* tests/c_api/reference.h — float64 GEMM and attention over host views: the
 * oracle the C ABI's results are held to.
 *
 * reference_gemm: want[(e * M + i) * N + j] = alpha * sum_p op(A)[e, i, p] *
 * op(B)[e, p, j] + beta * C[e, i, j] (C read only when beta != 0), for views
 * of rank 2 or 3 (a batch extent of 1 is shared), C as it is before the call.
 * reference_attention: want_out[((b * Lq + i) * H + h) * D + d] and
 * want_lse[(b * H + h) * Lq + i], from [batch, seq, heads, head_dim] views,
 * grouped-query heads (h reads h / (H / Hk)), causal aligned at the bottom
 * right, scale 0 meaning 1/sqrt(D); a row without keys is zeros, lse -inf.
 */
#ifndef TESSEL_TEST_C_API_REFERENCE_H
#define TESSEL_TEST_C_API_REFERENCE_H
#include "harness.h"

void reference_gemm(const view* a, const view* b, const view* c, double alpha, double beta, int trans_a, int trans_b,
                    double* want);
void reference_attention(const view* q, const view* k, const view* v, int causal, double scale, double* want_out,
                         double* want_lse);

#endif
