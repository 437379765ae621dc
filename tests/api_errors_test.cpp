// tests/api_errors_test.cpp — bad input is refused with a tessel::Error that names
// the argument and what was expected, and the output is left untouched.
#include <gtest/gtest.h>

#include <cstring>
#include <vector>

#include "device_buffer.hpp"
#include "tessel/tessel.hpp"

namespace tessel::test {
namespace {

// Host buffers for a 4x5 · 5x6 fp32 product; C holds a sentinel pattern.
struct fixture {
  std::vector<float> a = std::vector<float>(64, 1.0f), b = std::vector<float>(64, 2.0f), c = std::vector<float>(64, 42.0f);
  tensor_view va = tensor_view::contiguous(a.data(), dtype::f32, {4, 5});
  tensor_view vb = tensor_view::contiguous(b.data(), dtype::f32, {5, 6});
  tensor_view vc = tensor_view::contiguous(c.data(), dtype::f32, {4, 6});
  bool c_untouched() const {
    for (float x : c)
      if (x != 42.0f) return false;
    return true;
  }
};

// Expects gemm to throw an Error whose message contains every one of `parts`.
void expect_refused(fixture& f, std::initializer_list<const char*> parts, const gemm_options& o = {}) {
  try {
    gemm(f.va, f.vb, f.vc, o);
    ADD_FAILURE() << "gemm accepted bad input";
  } catch (const Error& e) {
    for (const char* p : parts) EXPECT_NE(std::strstr(e.what(), p), nullptr) << "message: " << e.what() << "\nmissing: " << p;
  }
  EXPECT_TRUE(f.c_untouched()) << "the output was written before the input was refused";
}

TEST(GemmErrors, WrongRank) {
  fixture f;
  f.va.rank = 1;
  expect_refused(f, {"argument 'a'", "expected rank 2 to 3", "got rank 1"});
}
TEST(GemmErrors, NegativeDimension) {
  fixture f;
  f.vb.shape[0] = -5;
  expect_refused(f, {"argument 'b'", "dimension 0 is -5", ">= 0"});
}
TEST(GemmErrors, NegativeStride) {
  fixture f;
  f.va.stride[1] = -1;
  expect_refused(f, {"argument 'a'", "stride 1 is -1"});
}
TEST(GemmErrors, InnerDimensionMismatch) {
  fixture f;
  f.vb = tensor_view::contiguous(f.b.data(), dtype::f32, {4, 6});
  expect_refused(f, {"argument 'b'", "with 5 rows (K", "got shape [4, 6]"});
}
TEST(GemmErrors, TransposeFlagChangesExpectedShape) {
  fixture f;
  gemm_options o;
  o.trans_a = true;  // op(A) = Aᵀ is 5x4: K = 4, but b has 5 rows
  expect_refused(f, {"argument 'b'", "with 4 rows"}, o);
}
TEST(GemmErrors, BadKernelPath) {
  fixture f;
  gemm_options o;
  o.path = static_cast<kernel_path>(-1);
  expect_refused(f, {"option 'path'", "kernel_path::fastest or kernel_path::portable", "-1"}, o);
}
TEST(GemmErrors, OutputShapeMismatch) {
  fixture f;
  f.vc = tensor_view::contiguous(f.c.data(), dtype::f32, {4, 7});
  expect_refused(f, {"argument 'c'", "expected shape [4, 6]", "got [4, 7]"});
}
TEST(GemmErrors, MixedInputTypes) {
  fixture f;
  f.va.type = dtype::bf16;
  f.vb.type = dtype::f16;
  expect_refused(f, {"unsupported dtype combination", "a=bf16", "b=fp16"});
}
TEST(GemmErrors, OutputTypeNeitherInputNorFp32) {
  fixture f;
  f.va.type = f.vb.type = dtype::bf16;
  f.vc.type = dtype::f16;
  expect_refused(f, {"unsupported dtype combination", "c=fp16", "c of that type or fp32"});
}
TEST(GemmErrors, NullPointerWithElements) {
  fixture f;
  f.vb.data = nullptr;
  expect_refused(f, {"argument 'b'", "null pointer", "30 elements"});
}
TEST(GemmErrors, SizeOverflowingInt64) {
  fixture f;
  f.va.shape[0] = std::int64_t(1) << 40;
  f.va.shape[1] = std::int64_t(1) << 40;
  expect_refused(f, {"argument 'a'", "more elements than fit in int64"});
}
TEST(GemmErrors, SizeBeyondInt) {
  fixture f;  // a [2^31, 5] view: the data is never touched because the check comes first
  f.va = tensor_view::contiguous(f.a.data(), dtype::f32, {std::int64_t(1) << 31, 5});
  f.vc = tensor_view::contiguous(f.c.data(), dtype::f32, {std::int64_t(1) << 31, 6});
  expect_refused(f, {"size M = 2147483648", "exceeds"});
}
TEST(GemmErrors, NoUnitStride) {
  fixture f;
  f.va = tensor_view::strided(f.a.data(), dtype::f32, {4, 5}, {10, 2});
  expect_refused(f, {"argument 'a'", "row- or column-major", "got strides [10, 2]"});
}
TEST(GemmErrors, OverlappingOutputElements) {
  fixture f;
  f.vc = tensor_view::strided(f.c.data(), dtype::f32, {4, 6}, {0, 1});
  expect_refused(f, {"argument 'c'", "overlap"});
}
TEST(GemmErrors, OutputAliasesInput) {
  fixture f;
  f.va = tensor_view::contiguous(f.c.data(), dtype::f32, {4, 5});
  expect_refused(f, {"argument 'c'", "overlaps the memory of 'a'"});
}
TEST(GemmErrors, BatchMismatch) {
  fixture f;
  f.va = tensor_view::contiguous(f.a.data(), dtype::f32, {2, 4, 5});
  f.vc = tensor_view::contiguous(f.c.data(), dtype::f32, {3, 4, 6});
  expect_refused(f, {"argument 'a'", "expected batch 3"});
}
TEST(GemmErrors, BatchedInputNeedsBatchedOutput) {
  fixture f;
  f.va = tensor_view::contiguous(f.a.data(), dtype::f32, {2, 4, 5});
  expect_refused(f, {"argument 'c'", "must be rank 3"});
}
TEST(GemmErrors, OperandsOnDifferentDevices) {
  fixture f;
  f.va.dev = device::cuda(0);
  expect_refused(f, {"argument 'a'", "on device cuda:0", "expected the device of c (host:0)"});
}
TEST(GemmErrors, DeviceWithoutItsBackendOrHostPointerOnDevice) {
  // In a build without the backend: refused as not built. In a build with it:
  // the host pointer is refused as not device memory. Either way, named.
  fixture f;
  const device d = support::default_device().kind == device_kind::host ? device::cuda(0) : support::default_device();
  f.va.dev = f.vb.dev = f.vc.dev = d;
  if (d.kind != device_kind::host && !support::device_available()) GTEST_SKIP() << "no device to ask about pointers";
  expect_refused(f, {"argument 'a'"});
}
TEST(GemmErrors, EmptyProductIsANoOp) {
  fixture f;
  f.va = tensor_view::contiguous(nullptr, dtype::f32, {0, 5});
  f.vc = tensor_view::contiguous(nullptr, dtype::f32, {0, 6});
  EXPECT_NO_THROW(gemm(f.va, f.vb, f.vc));
}
TEST(CpuIsa, UnknownNameRefused) {
  try {
    set_cpu_isa("avx9");
    ADD_FAILURE() << "accepted";
  } catch (const Error& e) {
    EXPECT_NE(std::strstr(e.what(), "argument 'name'"), nullptr) << e.what();
    EXPECT_NE(std::strstr(e.what(), "\"avx9\""), nullptr) << e.what();
  }
}

}  // namespace
}  // namespace tessel::test
