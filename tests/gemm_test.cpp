// tests/gemm_test.cpp — tessel::gemm on the built backend's device, against float64
// and against the CPU backend. Compiled into every backend's test binary.
#include <gtest/gtest.h>

#include <functional>

#include "device_buffer.hpp"
#include "gemm_cases.hpp"
#include "host_tensor.hpp"
#include "seed.hpp"

namespace tessel::test {
namespace {

std::string case_name(const ::testing::TestParamInfo<gemm_case>& info) { return info.param.name(); }

void expect_good(const gemm_case& c, const gemm_outcome& r, std::uint64_t seed) {
  EXPECT_EQ(r.guard_hits, 0) << c.name() << ": elements outside C changed (seed " << seed << ")";
  EXPECT_EQ(r.unwritten, 0) << c.name() << ": elements of C left unwritten (seed " << seed << ")";
  EXPECT_LT(r.error, tolerance(c.out, c.k)) << c.name() << ": relative error vs float64 (seed " << seed << ")";
}

class GemmShapes : public ::testing::TestWithParam<gemm_case> {};
class GemmLayouts : public ::testing::TestWithParam<gemm_case> {};
class GemmCrossBackend : public ::testing::TestWithParam<gemm_case> {};

TEST_P(GemmShapes, MatchesFloat64Reference) {
  if (!support::device_available()) GTEST_SKIP() << "no " << support::device_description();
  const std::uint64_t seed = case_seed(GetParam().name());
  expect_good(GetParam(), run_case(GetParam(), support::default_device(), seed), seed);
}

TEST_P(GemmLayouts, MatchesFloat64Reference) {
  if (!support::device_available()) GTEST_SKIP() << "no " << support::device_description();
  const std::uint64_t seed = case_seed(GetParam().name());
  expect_good(GetParam(), run_case(GetParam(), support::default_device(), seed), seed);
}

// The built device backend and the CPU backend on the same inputs. In a
// CPU-only build the "device" is the CPU's SIMD path and the other side its
// scalar oracle.
TEST_P(GemmCrossBackend, DeviceMatchesCpu) {
  if (!support::device_available()) GTEST_SKIP() << "no " << support::device_description();
  const gemm_case& c = GetParam();
  const std::uint64_t seed = case_seed(c.name());
  const gemm_outcome dev = run_case(c, support::default_device(), seed);
  const std::string best = cpu_isa();
  if (support::default_device().kind == device_kind::host) set_cpu_isa("scalar");
  const gemm_outcome cpu = run_case(c, device::host(), seed);
  set_cpu_isa(best);
  expect_good(c, dev, seed);
  expect_good(c, cpu, seed);
  EXPECT_LT(support::relative_error(cpu.out, dev.out), 2 * tolerance(c.out, c.k))
      << c.name() << ": device and CPU disagree (seed " << seed << ")";
}

INSTANTIATE_TEST_SUITE_P(Edges, GemmShapes, ::testing::ValuesIn(edge_shape_cases()), case_name);
INSTANTIATE_TEST_SUITE_P(Layouts, GemmLayouts, ::testing::ValuesIn(layout_cases()), case_name);
// Both kernel paths in one run (on an sm_90 device: TMA + wgmma above, the sm80 kernels here).
INSTANTIATE_TEST_SUITE_P(EdgesPortable, GemmShapes, ::testing::ValuesIn(on_portable_path(edge_shape_cases())),
                         case_name);
INSTANTIATE_TEST_SUITE_P(LayoutsPortable, GemmLayouts, ::testing::ValuesIn(on_portable_path(layout_cases())),
                         case_name);

std::vector<gemm_case> cross_cases() {
  std::vector<gemm_case> out;
  for (dtype t : {dtype::f32, dtype::f16, dtype::bf16})
    for (int s : {1, 64, 193}) {
      gemm_case c;
      c.m = s; c.n = s + 7; c.k = 2 * s + 1;
      c.in = c.out = t;
      c.trans_b = s == 64;
      c.alpha = 0.75f;
      c.beta = s == 193 ? 0.25f : 0.0f;
      out.push_back(c);
    }
  return out;
}
INSTANTIATE_TEST_SUITE_P(Cross, GemmCrossBackend, ::testing::ValuesIn(cross_cases()), case_name);

// Every CPU instruction set this machine has computes the same function.
TEST(GemmCpuIsa, EveryIsaMatchesReference) {
  const std::string best = cpu_isa();
  for (const char* isa : {"scalar", "avx2", "avx512", "amx"}) {
    try {
      set_cpu_isa(isa);
    } catch (const Error&) {
      std::printf("[ info     ] CPU lacks %s: not tested here\n", isa);
      continue;
    }
    for (dtype t : {dtype::f32, dtype::bf16}) {
      gemm_case c;
      c.m = 77; c.n = 130; c.k = 301; c.in = c.out = t; c.trans_a = true; c.beta = 0.5f;
      const std::uint64_t seed = case_seed(c.name() + isa);
      const gemm_outcome r = run_case(c, device::host(), seed);
      expect_good(c, r, seed);
    }
  }
  set_cpu_isa(best);
}

}  // namespace
}  // namespace tessel::test
