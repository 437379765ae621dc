// tests/tools/capi_test.cpp — the C entry point (bench/capi/tessel_capi.h) as a
// script calls it, linked against libtessel_capi.so: every value or pointer a
// C caller can get wrong returns 1 with a message naming the argument, and
// nothing is dereferenced on the way (a null array here would crash the test).
// Small host calls check that valid arguments still work. Its own main():
// the program links only the .so and GoogleTest.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <cstdint>
#include <string>
#include <vector>

#include "tessel_capi.h"

namespace {

std::string last_error() { return tessel_capi_last_error(); }

struct attention_args {
  int dtype = 0, device = 0;
  std::vector<float> q = std::vector<float>(1 * 4 * 2 * 64, 0.25f), k = q, v = q, out = q;
  std::vector<float> lse = std::vector<float>(1 * 2 * 4);
  int64_t shape[4] = {1, 4, 2, 64};
  int64_t strides[4] = {4 * 2 * 64, 2 * 64, 64, 1};
  const int64_t *q_shape = shape, *k_shape = shape, *q_strides = strides, *k_strides = strides,
                *v_strides = strides, *out_strides = strides;

  int call() {
    return tessel_capi_attention(dtype, device, q.data(), q_shape, q_strides, k.data(), k_shape, k_strides, v.data(),
                                 v_strides, out.data(), out_strides, lse.data(), 0, 0.0f, nullptr);
  }
};

// Fails unless the call returned 1 with every phrase in its message.
void expect_error(int rc, std::initializer_list<const char*> phrases) {
  EXPECT_EQ(rc, 1);
  const std::string e = last_error();
  for (const char* p : phrases) EXPECT_NE(e.find(p), std::string::npos) << "'" << p << "' not in: " << e;
}

TEST(CApi, ValidHostCallsWork) {
  attention_args a;
  ASSERT_EQ(a.call(), 0) << last_error();
  for (float x : a.out) EXPECT_NEAR(x, 0.25f, 1e-6f);  // all values equal: the average is the value
  for (float x : a.lse) EXPECT_NEAR(x, std::log(4.0f) + 0.25f * 0.25f * 64 / 8, 1e-5f);

  std::vector<float> A = {1, 2, 3, 4}, B = {1, 0, 0, 1}, C(4, -1.0f);
  ASSERT_EQ(tessel_capi_gemm(0, 0, 0, A.data(), B.data(), C.data(), 2, 2, 2, 0, 0, 1.0f, 0.0f, nullptr), 0)
      << last_error();
  EXPECT_EQ(C, A);
  // Empty problems: null data is fine where nothing is read or written.
  EXPECT_EQ(tessel_capi_gemm(0, 0, 0, nullptr, nullptr, nullptr, 0, 0, 5, 0, 0, 1.0f, 0.0f, nullptr), 0)
      << last_error();
}

TEST(CApi, UnknownDeviceAndDtypeValues) {
  for (int device : {7, -1, 3}) {
    SCOPED_TRACE(device);
    attention_args a;
    a.device = device;
    expect_error(a.call(), {"tessel_capi_attention", "'device'", std::to_string(device).c_str()});
    std::vector<float> A(4), B(4), C(4);
    expect_error(tessel_capi_gemm(0, 0, device, A.data(), B.data(), C.data(), 2, 2, 2, 0, 0, 1, 0, nullptr),
                 {"tessel_capi_gemm", "'device'", std::to_string(device).c_str()});
  }
  for (int dtype : {3, -1, 99}) {
    SCOPED_TRACE(dtype);
    attention_args a;
    a.dtype = dtype;
    expect_error(a.call(), {"'dtype'", std::to_string(dtype).c_str()});
    std::vector<float> A(4), B(4), C(4);
    expect_error(tessel_capi_gemm(dtype, 0, 0, A.data(), B.data(), C.data(), 2, 2, 2, 0, 0, 1, 0, nullptr),
                 {"'dtype_in'"});
    expect_error(tessel_capi_gemm(0, dtype, 0, A.data(), B.data(), C.data(), 2, 2, 2, 0, 0, 1, 0, nullptr),
                 {"'dtype_out'"});
  }
  if (std::string(tessel_capi_backends()) == "cpu") {  // a device this build does not have: tessel refuses it
    attention_args a;
    a.device = 1;
    expect_error(a.call(), {"cuda"});
  }
}

TEST(CApi, NullShapeAndStrideArrays) {
  const char* names[] = {"q_shape", "k_shape", "q_strides", "k_strides", "v_strides", "out_strides"};
  for (int i = 0; i < 6; ++i) {
    SCOPED_TRACE(names[i]);
    attention_args a;
    const int64_t** fields[] = {&a.q_shape, &a.k_shape, &a.q_strides, &a.k_strides, &a.v_strides, &a.out_strides};
    *fields[i] = nullptr;
    expect_error(a.call(), {(std::string("'") + names[i] + "' is a null pointer").c_str()});
  }
}

TEST(CApi, NegativeAndOverflowingSizes) {
  attention_args a;
  int64_t neg[4] = {1, -4, 2, 64};
  a.q_shape = neg;
  expect_error(a.call(), {"'q_shape[1]' is -4"});
  int64_t huge[4] = {int64_t(1) << 40, int64_t(1) << 40, 1, 64};
  a.q_shape = a.shape;
  a.k_shape = huge;
  expect_error(a.call(), {"'k_shape'", "overflows int64"});

  std::vector<float> A(4), B(4), C(4);
  expect_error(tessel_capi_gemm(0, 0, 0, A.data(), B.data(), C.data(), -2, 2, 2, 0, 0, 1, 0, nullptr), {"'m' is -2"});
  expect_error(tessel_capi_gemm(0, 0, 0, A.data(), B.data(), C.data(), 2, 2, -1, 0, 0, 1, 0, nullptr), {"'k' is -1"});
  const int64_t big = int64_t(1) << 33;
  expect_error(tessel_capi_gemm(0, 0, 0, A.data(), B.data(), C.data(), big, big, 1, 0, 0, 1, 0, nullptr),
               {"c (m x n)", "overflows int64"});
}

}  // namespace

int main(int argc, char** argv) {
  ::testing::InitGoogleTest(&argc, argv);
  std::printf("[ tessel   ] libtessel_capi backends: %s\n", tessel_capi_backends());
  return RUN_ALL_TESTS();
}
