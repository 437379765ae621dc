// tests/attention_test.cpp — tessel::attention on the built backend's device, against
// float64 and against the CPU backend; and its argument checks.
#include <gtest/gtest.h>

#include <cstring>

#include "attention_cases.hpp"
#include "attention_checks.hpp"
#include "device_buffer.hpp"
#include "host_tensor.hpp"
#include "seed.hpp"

namespace tessel::test {
namespace {

std::string case_name(const ::testing::TestParamInfo<attention_case>& i) { return i.param.name(); }

bool device_has_fp32() { return support::default_device().kind == device_kind::host; }

class Attention : public ::testing::TestWithParam<attention_case> {};

TEST_P(Attention, MatchesFloat64Reference) {
  if (!support::device_available()) GTEST_SKIP() << "no " << support::device_description();
  const std::uint64_t seed = case_seed(GetParam().name());
  expect_good(GetParam(), run_attention(GetParam(), support::default_device(), seed), seed);
}
INSTANTIATE_TEST_SUITE_P(Cases, Attention, ::testing::ValuesIn(attention_cases(device_has_fp32())), case_name);

// The cases up to 1024 keys once more on kernel_path::portable: both paths in one
// run (on an sm_90 device the sm80 kernels here, wgmma above).
std::vector<attention_case> portable_cases() {
  std::vector<attention_case> out;
  for (attention_case c : attention_cases(device_has_fp32()))
    if (c.q_len <= 1024 && c.kv_len <= 1024) {
      c.portable = true;
      out.push_back(c);
    }
  return out;
}
INSTANTIATE_TEST_SUITE_P(CasesPortable, Attention, ::testing::ValuesIn(portable_cases()), case_name);

TEST(AttentionCross, DeviceMatchesCpu) {
  if (!support::device_available()) GTEST_SKIP() << "no " << support::device_description();
  for (bool causal : {false, true}) {
    attention_case c;
    c.batch = 2; c.q_len = 300; c.kv_len = 333; c.heads = 4; c.kv_heads = 2; c.head_dim = 128; c.causal = causal;
    const std::uint64_t seed = case_seed(c.name() + "cross");
    const attention_outcome dev = run_attention(c, support::default_device(), seed);
    const std::string best = cpu_isa();
    if (support::default_device().kind == device_kind::host) set_cpu_isa("scalar");
    const attention_outcome cpu = run_attention(c, device::host(), seed);
    set_cpu_isa(best);
    expect_good(c, dev, seed);
    expect_good(c, cpu, seed);
    EXPECT_LT(support::relative_error(cpu.out, dev.out), 2 * attention_tolerance(c.type)) << c.name();
  }
}

// ---- argument checks -------------------------------------------------------------

struct attention_fixture {
  std::vector<std::uint16_t> q = std::vector<std::uint16_t>(4096, 0x3c00), k = q, v = q, o = std::vector<std::uint16_t>(4096, 0x1234);
  std::vector<float> l = std::vector<float>(64, 7.0f);
  tensor_view vq = tensor_view::contiguous(q.data(), dtype::bf16, {1, 8, 2, 64});
  tensor_view vk = tensor_view::contiguous(k.data(), dtype::bf16, {1, 9, 1, 64});
  tensor_view vv = tensor_view::contiguous(v.data(), dtype::bf16, {1, 9, 1, 64});
  tensor_view vo = tensor_view::contiguous(o.data(), dtype::bf16, {1, 8, 2, 64});
  attention_options opt;
  bool untouched() const {
    for (auto x : o) if (x != 0x1234) return false;
    for (float x : l) if (x != 7.0f) return false;
    return true;
  }
};

void expect_refused(attention_fixture& f, std::initializer_list<const char*> parts) {
  try {
    attention(f.vq, f.vk, f.vv, f.vo, f.opt);
    ADD_FAILURE() << "attention accepted bad input";
  } catch (const Error& e) {
    for (const char* p : parts) EXPECT_NE(std::strstr(e.what(), p), nullptr) << e.what() << "\nmissing: " << p;
  }
  EXPECT_TRUE(f.untouched()) << "output written before the input was refused";
}

TEST(AttentionErrors, HeadDim) {
  attention_fixture f;
  f.vq.shape[3] = f.vk.shape[3] = f.vv.shape[3] = f.vo.shape[3] = 32;
  expect_refused(f, {"head_dim 32", "expected 64 or 128"});
}
TEST(AttentionErrors, HeadsNotDivisible) {
  attention_fixture f;
  f.vq = tensor_view::contiguous(f.q.data(), dtype::bf16, {1, 8, 3, 64});
  f.vo = tensor_view::contiguous(f.o.data(), dtype::bf16, {1, 8, 3, 64});
  f.vk = tensor_view::contiguous(f.k.data(), dtype::bf16, {1, 9, 2, 64});
  f.vv = tensor_view::contiguous(f.v.data(), dtype::bf16, {1, 9, 2, 64});
  expect_refused(f, {"argument 'k'", "2 heads must divide the 3 heads"});
}
TEST(AttentionErrors, ValueShape) {
  attention_fixture f;
  f.vv.shape[1] = 8;
  expect_refused(f, {"argument 'v'", "expected the shape of k"});
}
TEST(AttentionErrors, OutShape) {
  attention_fixture f;
  f.vo.shape[1] = 7;
  expect_refused(f, {"argument 'out'", "expected the shape of q"});
}
TEST(AttentionErrors, MixedTypes) {
  attention_fixture f;
  f.vk.type = dtype::f16;
  expect_refused(f, {"unsupported dtype combination", "k=fp16"});
}
TEST(AttentionErrors, HeadDimNotContiguous) {
  attention_fixture f;
  f.vq.stride[3] = 2;
  expect_refused(f, {"argument 'q'", "head_dim", "contiguous"});
}
TEST(AttentionErrors, LseShapeAndType) {
  attention_fixture f;
  f.opt.lse = tensor_view::contiguous(f.l.data(), dtype::f32, {1, 2, 9});
  expect_refused(f, {"argument 'lse'", "expected shape [1, 2, 8]"});
  f.opt.lse = tensor_view::contiguous(f.l.data(), dtype::bf16, {1, 2, 8});
  expect_refused(f, {"argument 'lse'", "expected dtype fp32"});
}
TEST(AttentionErrors, BadScale) {
  attention_fixture f;
  f.opt.scale = -1.0f;
  expect_refused(f, {"option 'scale'", "> 0"});
}
TEST(AttentionErrors, BadKernelPath) {
  attention_fixture f;
  f.opt.path = static_cast<kernel_path>(7);
  expect_refused(f, {"option 'path'", "kernel_path::fastest or kernel_path::portable", "7"});
}
TEST(AttentionErrors, OutAliasesInput) {
  attention_fixture f;
  f.vo = tensor_view::contiguous(f.q.data(), dtype::bf16, {1, 8, 2, 64});
  try {
    attention(f.vq, f.vk, f.vv, f.vo, f.opt);
    ADD_FAILURE() << "accepted";
  } catch (const Error& e) {
    EXPECT_NE(std::strstr(e.what(), "overlaps the memory of 'q'"), nullptr) << e.what();
  }
}
TEST(AttentionErrors, WrongRank) {
  attention_fixture f;
  f.vq.rank = 3;
  expect_refused(f, {"argument 'q'", "expected rank 4"});
}

}  // namespace
}  // namespace tessel::test
