// examples/consumer/main.cpp — C = A·B on the CPU through an installed tessel.
#include <tessel/tessel.hpp>

#include <cmath>
#include <cstdio>
#include <vector>

int main() {
  const int m = 37, n = 29, k = 53;
  std::vector<float> a(m * k), b(k * n), c(m * n, -1.0f);
  for (int i = 0; i < m * k; ++i) a[i] = float((i * 7) % 13) / 13.0f - 0.5f;
  for (int i = 0; i < k * n; ++i) b[i] = float((i * 5) % 11) / 11.0f - 0.5f;
  tessel::gemm(tessel::tensor_view::contiguous(a.data(), tessel::dtype::f32, {m, k}),
               tessel::tensor_view::contiguous(b.data(), tessel::dtype::f32, {k, n}),
               tessel::tensor_view::contiguous(c.data(), tessel::dtype::f32, {m, n}));
  double worst = 0;
  for (int i = 0; i < m; ++i)
    for (int j = 0; j < n; ++j) {
      double ref = 0;
      for (int p = 0; p < k; ++p) ref += double(a[i * k + p]) * b[p * n + j];
      worst = std::fmax(worst, std::fabs(ref - c[i * n + j]));
    }
  std::printf("consumer: tessel %s (cpu isa %s), max abs error %.3g\n", tessel::built_backends(), tessel::cpu_isa(), worst);
  return worst < 1e-4 ? 0 : 1;
}
