/* examples/c_consumer/main.c — C = A·Bᵀ on the CPU through an installed
 * tessel's C ABI (<tessel/c_api.h>, libtessel_c), checked against a plain loop. */
#include <math.h>
#include <stdio.h>

#include <tessel/c_api.h>

enum { M = 37, N = 29, K = 53 };

int main(void) {
  if (!TESSEL_C_API_VERSION_COMPATIBLE(tessel_c_api_version())) {
    fprintf(stderr, "libtessel_c has C ABI version %d, this program needs %d\n", (int)tessel_c_api_version(),
            TESSEL_C_API_VERSION);
    return 1;
  }
  static float a[M * K], b[N * K], c[M * N];
  for (int i = 0; i < M * K; ++i) a[i] = (float)((i * 7) % 13) / 13.0f - 0.5f;
  for (int i = 0; i < N * K; ++i) b[i] = (float)((i * 5) % 11) / 11.0f - 0.5f;

  /* b is stored [N, K]; trans_b = 1 makes it the [K, N] operand. NULL strides: packed row-major. */
  const int64_t a_shape[2] = {M, K}, b_shape[2] = {N, K}, c_shape[2] = {M, N};
  const tessel_tensor ta = {a, a_shape, NULL, TESSEL_DTYPE_F32, 2, TESSEL_DEVICE_HOST, 0};
  const tessel_tensor tb = {b, b_shape, NULL, TESSEL_DTYPE_F32, 2, TESSEL_DEVICE_HOST, 0};
  const tessel_tensor tc = {c, c_shape, NULL, TESSEL_DTYPE_F32, 2, TESSEL_DEVICE_HOST, 0};
  const tessel_status s = tessel_gemm(&ta, &tb, &tc, 1.0f, 0.0f, /*trans_a=*/0, /*trans_b=*/1, TESSEL_PATH_FASTEST,
                                      /*threads=*/0, /*stream=*/NULL);
  if (s != TESSEL_OK) {
    fprintf(stderr, "tessel_gemm: %s: %s\n", tessel_status_name(s), tessel_last_error());
    return 1;
  }

  double worst = 0;
  for (int i = 0; i < M; ++i)
    for (int j = 0; j < N; ++j) {
      double ref = 0;
      for (int p = 0; p < K; ++p) ref += (double)a[i * K + p] * b[j * K + p];
      worst = fmax(worst, fabs(ref - c[i * N + j]));
    }
  printf("c_consumer: libtessel_c %d (%s), max abs error %.3g\n", (int)tessel_c_api_version(), tessel_backends(),
         worst);
  return worst < 1e-4 ? 0 : 1;
}
