// tests/cuda/convert_test.cu — the device's float -> bf16 / fp16 conversions (arch/convert.hpp).
//
// cvt_pack (one pair, the NaN re-encoded per value), cvt_pack4 (four pairs,
// the NaN path taken only where one of the eight values is a NaN) and
// cvt_pack_groups (eight groups of eight, one NaN test for all 64 values: the
// sm90 epilogue's round) must give element.hpp's to_bf16 / to_fp16 bit for
// bit, for every input: each value is converted all three ways on the device
// and compared with the host's.
// Inputs: the special values (±0, ±Inf, quiet and signalling NaNs with
// payloads and either sign, fp16 overflow and subnormal bounds, rounding
// ties), random bit patterns, random finite values; groups with no NaN, one
// NaN at each position, and NaNs only; runs of 64 values with one NaN at each
// of the 64 positions (one NaN group among eight NaN-free ones). Runs on any CUDA device; skips without.
#include <gtest/gtest.h>

#include <cuda_runtime.h>

#include <cstdint>
#include <cstring>
#include <random>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <vector>

#include "device_buffer.hpp"
#include "seed.hpp"
#include "tessel/cuda/arch/convert.hpp"

namespace tessel::test {
namespace {

// out4[4g .. 4g + 3]: cvt_pack4 of group g (values 8g .. 8g + 7); out1[4g .. 4g + 3]: cvt_pack per pair.
template <class T>
__global__ void convert_groups(const float* in, std::uint32_t* out4, std::uint32_t* out1, int groups) {
  const int g = blockIdx.x * blockDim.x + threadIdx.x;
  if (g >= groups) return;
  float v[8];
  for (int i = 0; i < 8; ++i) v[i] = in[8 * g + i];
  std::uint32_t r[4];
  cuda::arch::cvt_pack4(v, r, T{});
  for (int m = 0; m < 4; ++m) {
    out4[4 * g + m] = r[m];
    out1[4 * g + m] = cuda::arch::cvt_pack(v[2 * m], v[2 * m + 1], T{});
  }
}

// out64[32b .. 32b + 31]: cvt_pack_groups of run b (groups 8b .. 8b + 7).
template <class T> __global__ void convert_runs(const float* in, std::uint32_t* out64, int runs) {
  const int b = blockIdx.x * blockDim.x + threadIdx.x;
  if (b >= runs) return;
  float v[8][8];
  for (int g = 0; g < 8; ++g)
    for (int i = 0; i < 8; ++i) v[g][i] = in[64 * b + 8 * g + i];
  std::uint32_t r[8][4];
  cuda::arch::cvt_pack_groups(v, r, T{});
  for (int g = 0; g < 8; ++g)
    for (int m = 0; m < 4; ++m) out64[32 * b + 4 * g + m] = r[g][m];
}

void check(cudaError_t e, const char* what) {
  if (e != cudaSuccess) throw std::runtime_error(std::string(what) + ": " + cudaGetErrorString(e));
}

float from_bits(std::uint32_t u) {
  float f;
  std::memcpy(&f, &u, 4);
  return f;
}

std::vector<float> inputs(const std::string& name) {
  const std::uint32_t special[] = {
      0x00000000u, 0x80000000u, 0x7f800000u, 0xff800000u,  // ±0, ±Inf
      0x7fc00000u, 0xffc00000u, 0x7f800001u, 0xff800001u,  // quiet / signalling NaNs, both signs
      0x7fffffffu, 0xffffffffu, 0x7fa5a5a5u, 0xff812345u,  // NaN payloads
      0x477fefffu, 0x477ff000u, 0x477fffffu, 0x47800000u,  // fp16 max (65504) .. overflow: ties to Inf
      0x33800000u, 0x33000000u, 0x33000001u, 0x387fc000u,  // fp16 subnormal bounds, half-way, just above
      0x3f808000u, 0x3f818000u, 0x3f808001u, 0x00000001u,  // bf16 ties (to even, both ways), float subnormal
      0x7f7fffffu, 0xff7fffffu, 0x3f800000u, 0xbf800000u,  // float max (bf16: rounds to Inf), ±1
  };
  std::vector<float> v;
  for (std::uint32_t u : special) v.push_back(from_bits(u));
  std::mt19937 rng(std::uint32_t(case_seed(name)));
  std::uniform_int_distribution<std::uint32_t> bits;
  std::uniform_real_distribution<float> finite(-70000.0f, 70000.0f);
  std::uniform_int_distribution<int> pick(0, 11);
  // Random bit patterns (~0.4% NaN), random finite values.
  for (int i = 0; i < 8 * 4096; ++i) v.push_back(from_bits(bits(rng)));
  for (int i = 0; i < 8 * 4096; ++i) v.push_back(finite(rng));
  // Groups of finite values with one NaN at each position, then NaNs only.
  for (int pos = 0; pos < 8; ++pos)
    for (int rep = 0; rep < 64; ++rep)
      for (int i = 0; i < 8; ++i) v.push_back(i == pos ? from_bits(special[4 + pick(rng) % 8]) : finite(rng));
  for (int rep = 0; rep < 64; ++rep)
    for (int i = 0; i < 8; ++i) v.push_back(from_bits(special[4 + pick(rng) % 8]));
  while (v.size() % 64 != 0) v.push_back(finite(rng));
  // Runs of 64 (cvt_pack_groups' eight groups): one NaN at each position.
  for (int pos = 0; pos < 64; ++pos)
    for (int i = 0; i < 64; ++i) v.push_back(i == pos ? from_bits(special[4 + pick(rng) % 8]) : finite(rng));
  return v;
}

template <class T> std::uint16_t host_bits(float f) {
  if constexpr (std::is_same_v<T, bf16>) return to_bf16(f).bits;
  else return to_fp16(f).bits;
}

template <class T> void expect_as_host(const char* name) {
  if (!support::device_available()) GTEST_SKIP() << "no CUDA device";
  const std::vector<float> in = inputs(std::string("convert-") + name);
  const int groups = int(in.size() / 8);
  float* d_in = nullptr;
  const int runs = int(in.size() / 64);
  std::uint32_t *d4 = nullptr, *d1 = nullptr, *d64 = nullptr;
  check(cudaMalloc(&d_in, in.size() * 4), "cudaMalloc");
  check(cudaMalloc(&d4, in.size() * 2), "cudaMalloc");
  check(cudaMalloc(&d1, in.size() * 2), "cudaMalloc");
  check(cudaMalloc(&d64, in.size() * 2), "cudaMalloc");
  check(cudaMemcpy(d_in, in.data(), in.size() * 4, cudaMemcpyHostToDevice), "cudaMemcpy");
  check(cudaMemset(d4, 0xa5, in.size() * 2), "cudaMemset");  // poison: an unwritten word shows
  check(cudaMemset(d1, 0xa5, in.size() * 2), "cudaMemset");
  check(cudaMemset(d64, 0xa5, in.size() * 2), "cudaMemset");
  convert_groups<T><<<(groups + 127) / 128, 128>>>(d_in, d4, d1, groups);
  check(cudaGetLastError(), "convert_groups launch");
  convert_runs<T><<<(runs + 127) / 128, 128>>>(d_in, d64, runs);
  check(cudaGetLastError(), "convert_runs launch");
  std::vector<std::uint32_t> out4(in.size() / 2), out1(in.size() / 2), out64(in.size() / 2);
  check(cudaMemcpy(out4.data(), d4, in.size() * 2, cudaMemcpyDeviceToHost), "cudaMemcpy");
  check(cudaMemcpy(out1.data(), d1, in.size() * 2, cudaMemcpyDeviceToHost), "cudaMemcpy");
  check(cudaMemcpy(out64.data(), d64, in.size() * 2, cudaMemcpyDeviceToHost), "cudaMemcpy");
  check(cudaFree(d_in), "cudaFree");
  check(cudaFree(d4), "cudaFree");
  check(cudaFree(d1), "cudaFree");
  check(cudaFree(d64), "cudaFree");
  int failures = 0;
  for (std::size_t i = 0; i < in.size() && failures < 20; ++i) {
    const std::uint16_t want = host_bits<T>(in[i]);
    const int shift = 16 * int(i % 2);
    const std::uint16_t got4 = std::uint16_t(out4[i / 2] >> shift), got1 = std::uint16_t(out1[i / 2] >> shift);
    const std::uint16_t got64 = std::uint16_t(out64[i / 2] >> shift);
    std::uint32_t u;
    std::memcpy(&u, &in[i], 4);
    if (got4 != want || got1 != want || got64 != want) {
      ++failures;
      ADD_FAILURE() << name << " of 0x" << std::hex << u << ": host 0x" << want << ", cvt_pack4 0x" << got4
                    << ", cvt_pack 0x" << got1 << ", cvt_pack_groups 0x" << got64 << " (value " << std::dec << i
                    << ")";
    }
  }
  EXPECT_EQ(failures, 0);
}

TEST(DeviceConvert, Bf16AsHost) { expect_as_host<bf16>("bf16"); }
TEST(DeviceConvert, Fp16AsHost) { expect_as_host<fp16>("fp16"); }

}  // namespace
}  // namespace tessel::test
