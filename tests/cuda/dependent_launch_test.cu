// tests/cuda/dependent_launch_test.cu — GEMMs launched to overlap the kernel before them (programmatic dependent launch).
//
// The sm90 GEMM is launched with programmatic stream serialization: its
// blocks may start while the stream's previous kernel runs, and wait for it
// (griddepcontrol.wait) before touching memory (launch.hpp, schedule_sm90.hpp).
// Each case gives an early start every chance to read or write too soon, and
// checks the results against float64 (a control first prints whether a kernel
// launched the same way but reading without the wait does see its
// predecessor unfinished: that is what the GEMM's wait must prevent):
// - WaitsForTheKernelBefore: a kernel that lets its successor launch at once,
//   then idles ~0.2 ms, then writes A and B (poisoned until then); the GEMM
//   right after it must see the written values, on a created stream and on
//   the legacy default stream;
// - Chain: C1 = A·B, C2 = C1·D, then C1 = E·F, with no host synchronisation
//   between them: the second must read all of the first's C1 and the third
//   must not overwrite C1 before the second has read it;
// - ChainInAGraph: the chain captured in a CUDA graph and replayed twice,
//   with new A and E (and C1, C2 poisoned) between the replays: a replay that
//   found the first one's split flags still set would add its stale partials.
// Each also at a shape whose matrices no tensor map describes, so that the
// GEMMs' aligned copies (launched the same way) run before and after them,
// and at a few-row shape that the split kernel runs, whose workspace flags a
// zeroing kernel clears before it (launched the same way, launch.hpp);
// WaitsForTheKernelBefore checks that such calls took workspace from
// tessel's pool where the sm90 path runs, and a plain one none.
// The GEMM kernels let their successor launch only as their blocks end
// (schedule_sm90.hpp), the copies and the zeroing kernel earlier: in the
// chains a GEMM after a GEMM starts before the first one's writes are
// flushed, which only its own wait covers; the predecessor of
// WaitsForTheKernelBefore lets the GEMM start ~0.2 ms before it writes.
// On devices without the sm90 path the GEMMs run the sm80 kernels, launched
// plainly: the cases then check ordinary stream order. So do the legacy
// default stream's cases where the control sees no overlap there (the H100,
// 2026-11-24: overlap on a created stream only). Skips without a device.
#include <gtest/gtest.h>

#include <cuda_runtime.h>

#include <cstdint>
#include <cstdio>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

#include "device_buffer.hpp"
#include "host_tensor.hpp"
#include "seed.hpp"
#include "tessel/cuda/arch/grid_dependency.hpp"
#include "tessel/cuda/launch.hpp"
#include "tessel/cuda/operand_copy.hpp"
#include "tessel/cuda/policy_choice.hpp"
#include "tessel/cuda/policy_sm90.hpp"
#include "tessel/gemm.hpp"
#include "tessel/ops/gemm/kernel.hpp"

namespace tessel::test {
namespace {

void check(cudaError_t e, const char* what) {
  if (e != cudaSuccess) throw std::runtime_error(std::string(what) + ": " + cudaGetErrorString(e));
}

// Lets the stream's next kernel launch at once, idles `cycles` clocks, then
// copies n 16-bit words from src to dst (grid-stride).
__global__ void late_copy(const std::uint16_t* src, std::uint16_t* dst, long long n, long long cycles) {
  cuda::arch::grid_dependents_launch();
  const long long start = clock64();
  while (clock64() - start < cycles) {
  }
  for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < n; i += (long long)gridDim.x * blockDim.x)
    dst[i] = src[i];
}

// What a kernel launched to overlap its predecessor sees if it reads without
// waiting: the first word of `a`, into *seen (the scenario's control).
__global__ void early_read(const std::uint16_t* a, std::uint16_t* seen) {
  if (blockIdx.x == 0 && threadIdx.x == 0) *seen = a[0];
}

// Whether a kernel launched with programmatic stream serialization right after
// late_copy on `queue` starts before the copy is done (it reads without waiting).
bool overlap_observed(cudaStream_t queue) {
  support::host_tensor src(dtype::bf16, 1), poison(dtype::bf16, 1);
  src.set(0, 1.0f);
  support::fill_poison(poison);
  support::device_buffer from(support::default_device(), 2), to(support::default_device(), 2),
      seen(support::default_device(), 2);
  from.upload(src.data(), 2);
  to.upload(poison.data(), 2);
  late_copy<<<1, 32, 0, queue>>>(static_cast<const std::uint16_t*>(from.data()), static_cast<std::uint16_t*>(to.data()),
                                 1, 400000);
  check(cudaGetLastError(), "late_copy");
  cudaLaunchConfig_t config{};
  cudaLaunchAttribute attribute[1];
  config.gridDim = dim3(1);
  config.blockDim = dim3(32);
  config.stream = queue;
  cuda::allow_overlap(config, attribute);  // as the library launches its kernels
  check(cudaLaunchKernelEx(&config, early_read, static_cast<const std::uint16_t*>(to.data()),
                           static_cast<std::uint16_t*>(seen.data())),
        "cudaLaunchKernelEx (early_read)");
  check(cudaStreamSynchronize(queue), "cudaStreamSynchronize");
  support::host_tensor got(dtype::bf16, 1);
  seen.download(got.data(), 2);
  return support::is_poison(got, 0);
}

struct matrix {
  int rows, cols;
  support::host_tensor host;
  support::device_buffer dev;
  matrix(int r, int c, dtype t)
      : rows(r), cols(c), host(t, std::size_t(r) * c), dev(support::default_device(), host.bytes.size()) {}
  tensor_view on_device() { return tensor_view::contiguous(dev.data(), host.type, {rows, cols}, dev.where()); }
  void upload() { dev.upload(host.data(), host.bytes.size()); }
  void poison() {
    support::host_tensor p(host.type, host.count);
    support::fill_poison(p);
    dev.upload(p.data(), p.bytes.size());
  }
  std::vector<double> download() {
    support::host_tensor out(host.type, host.count);
    dev.download(out.data(), out.bytes.size());
    std::vector<double> v(out.count);
    for (std::size_t i = 0; i < out.count; ++i) v[i] = out.get(i);
    return v;
  }
};

// x·y in float64 (support's reference GEMM on the host copies).
std::vector<double> product(matrix& x, matrix& y) {
  const auto host = [](support::host_tensor& t, int rows, int cols) {
    return tensor_view::contiguous(t.data(), t.type, {rows, cols}, device::host());
  };
  support::host_tensor c(dtype::f32, std::size_t(x.rows) * y.cols);  // not read: beta = 0
  return support::reference_gemm(host(x.host, x.rows, x.cols), host(y.host, y.rows, y.cols), host(c, x.rows, y.cols),
                                 gemm_options{});
}

// ‖C − ref‖/‖ref‖ must stay within the output's rounding (bf16: 2^-8) and a margin.
constexpr double bf16_tolerance = 1.0 / 128, f32_tolerance = 1e-4;

// 2048 × 2048 × 256: 128 work units of 128 × 256, more than half the SMs, so
// no split (and no memset between the copy and the GEMM). 1000 × 1001 × 257:
// A, B and C rows of odd lengths, which no tensor map describes, so the call
// copies A and B aligned first and C back after (operand_copy.hpp): the first
// copy must wait for late_copy, and each kernel after for the one before.
struct gemm_shape {
  int m, n, k;
  constexpr bool operator==(const gemm_shape& o) const { return m == o.m && n == o.n && k == o.k; }
};
// 128 × 2048 × 2048: 8 units of 32 steps, which the split plan cuts in pieces
// (so C1·D, 128 × 2048 × 2048 too, in the chain).
constexpr gemm_shape plain_shape{2048, 2048, 256}, odd_shape{1000, 1001, 257}, split_shape{128, 2048, 2048};

// Whether a bf16 call runs the sm90 kernels here.
bool sm90_expected() {
  using probe = ops::gemm_kernel<cuda::sm90, bf16, bf16, true, true>;
  return cuda::use_sm90<probe, probe::warps * cuda::warp_lanes>();
}
// Whether odd shapes are copied here (the test in gemm_instance.hpp): the
// sm90 kernels run and the copies are not turned off.
bool copies_expected() { return sm90_expected() && cuda::copies_enabled(); }

void waits_for_the_kernel_before(cudaStream_t queue, dtype out, const std::string& name, gemm_shape shape = plain_shape) {
  const int m = shape.m, n = shape.n, k = shape.k;
  std::mt19937_64 rng(case_seed(name));
  matrix a(m, k, dtype::bf16), b(k, n, dtype::bf16), c(m, n, out);
  support::fill_random(a.host, rng);
  support::fill_random(b.host, rng);
  support::device_buffer src_a(a.dev.where(), a.host.bytes.size()), src_b(b.dev.where(), b.host.bytes.size());
  src_a.upload(a.host.data(), a.host.bytes.size());
  src_b.upload(b.host.data(), b.host.bytes.size());
  a.poison();
  b.poison();
  c.poison();
  support::synchronize(a.dev.where());
  const long long cycles = 400000;  // ~0.2 ms at the H100's clocks
  late_copy<<<132, 256, 0, queue>>>(static_cast<const std::uint16_t*>(src_a.data()),
                                     static_cast<std::uint16_t*>(a.dev.data()), (long long)a.host.count, cycles);
  check(cudaGetLastError(), "late_copy (A)");
  late_copy<<<132, 256, 0, queue>>>(static_cast<const std::uint16_t*>(src_b.data()),
                                     static_cast<std::uint16_t*>(b.dev.data()), (long long)b.host.count, cycles);
  check(cudaGetLastError(), "late_copy (B)");
  // The workspace the call takes from tessel's pool says whether it copied:
  // the odd shape must have (else it tested the plain path twice), the
  // plain one must not.
  cudaMemPool_t pool = cuda::workspace_pool(a.dev.where().index);
  cuuint64_t zero = 0, used = 0;
  check(cudaMemPoolSetAttribute(pool, cudaMemPoolAttrUsedMemHigh, &zero), "cudaMemPoolSetAttribute");
  gemm(a.on_device(), b.on_device(), c.on_device(), gemm_options{}, stream::gpu(queue));
  check(cudaStreamSynchronize(queue), "cudaStreamSynchronize");
  check(cudaMemPoolGetAttribute(pool, cudaMemPoolAttrUsedMemHigh, &used), "cudaMemPoolGetAttribute");
  if (shape == odd_shape && copies_expected()) EXPECT_GT(used, 0u) << name << ": the call made no aligned copies";
  if (shape == split_shape && sm90_expected()) EXPECT_GT(used, 0u) << name << ": the call took no split workspace";
  if (shape == plain_shape) EXPECT_EQ(used, 0u) << name << ": the call took workspace (copies or a split)";
  EXPECT_LT(support::relative_error(product(a, b), c.download()), out == dtype::f32 ? f32_tolerance : bf16_tolerance) << name;
}

TEST(DependentLaunch, WaitsForTheKernelBefore) {
  if (!support::device_available()) GTEST_SKIP() << "no CUDA device";
  cudaStream_t s = nullptr;
  check(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking), "cudaStreamCreateWithFlags");
  // The control: whether this device starts a dependent kernel early at all
  // (where it does not, the cases below check plain stream order only).
  std::printf("[ control  ] a kernel that does not wait sees its predecessor unfinished: created stream %s, "
              "default stream %s\n",
              overlap_observed(s) ? "yes" : "no", overlap_observed(nullptr) ? "yes" : "no");
  waits_for_the_kernel_before(s, dtype::bf16, "created stream, bf16 C");
  waits_for_the_kernel_before(s, dtype::f32, "created stream, fp32 C");
  waits_for_the_kernel_before(s, dtype::bf16, "created stream, odd shape (aligned copies), bf16 C", odd_shape);
  waits_for_the_kernel_before(s, dtype::f32, "created stream, odd shape (aligned copies), fp32 C", odd_shape);
  waits_for_the_kernel_before(s, dtype::bf16, "created stream, few rows (split), bf16 C", split_shape);
  waits_for_the_kernel_before(s, dtype::f32, "created stream, few rows (split), fp32 C", split_shape);
  check(cudaStreamDestroy(s), "cudaStreamDestroy");
  waits_for_the_kernel_before(nullptr, dtype::bf16, "default stream, bf16 C");
  waits_for_the_kernel_before(nullptr, dtype::bf16, "default stream, odd shape (aligned copies), bf16 C", odd_shape);
  waits_for_the_kernel_before(nullptr, dtype::bf16, "default stream, few rows (split), bf16 C", split_shape);
}

// C1 = A·B, C2 = C1·D, C1 = E·F on `queue`, enqueued by `enqueue` (directly,
// or into a graph it then replays; between replays it calls `renew`, which
// fills A and E afresh and poisons C1 and C2); checks C2 against A·B rounded
// to bf16 times D, and the final C1 against E·F.
// 2048 × 1280 × 256: 80 work units of 128 × 256 (no split, so nothing runs
// between the GEMMs); odd_shape: every matrix copied aligned, C1 copied back
// by one GEMM and copied in by the next; split_shape: each GEMM split, its
// flags zeroed by a kernel between it and the one before.
template <class Enqueue>
void chain(cudaStream_t queue, const std::string& name, Enqueue enqueue, gemm_shape shape = {2048, 1280, 256}) {
  const int m = shape.m, n = shape.n, k = shape.k;
  std::mt19937_64 rng(case_seed(name));
  matrix a(m, k, dtype::bf16), b(k, n, dtype::bf16), d(n, n, dtype::bf16), e(m, k, dtype::bf16), f(k, n, dtype::bf16);
  matrix c1(m, n, dtype::bf16), c2(m, n, dtype::bf16);
  for (matrix* x : {&a, &b, &d, &e, &f}) {
    support::fill_random(x->host, rng);
    x->upload();
  }
  c1.poison();
  c2.poison();
  support::synchronize(a.dev.where());
  const auto renew = [&] {
    for (matrix* x : {&a, &e}) {
      support::fill_random(x->host, rng);
      x->upload();
    }
    c1.poison();
    c2.poison();
    support::synchronize(a.dev.where());
  };
  enqueue(
      [&](cudaStream_t s) {
        gemm(a.on_device(), b.on_device(), c1.on_device(), gemm_options{}, stream::gpu(s));
        gemm(c1.on_device(), d.on_device(), c2.on_device(), gemm_options{}, stream::gpu(s));
        gemm(e.on_device(), f.on_device(), c1.on_device(), gemm_options{}, stream::gpu(s));
      },
      renew);
  check(cudaStreamSynchronize(queue), "cudaStreamSynchronize");
  // The first product as the second GEMM should have read it: A·B rounded to bf16.
  const auto ab = product(a, b);
  for (std::size_t i = 0; i < ab.size(); ++i) c1.host.set(i, float(ab[i]));
  EXPECT_LT(support::relative_error(product(c1, d), c2.download()), 2 * bf16_tolerance) << name << ": C2 = (A·B)·D";
  EXPECT_LT(support::relative_error(product(e, f), c1.download()), bf16_tolerance) << name << ": C1 = E·F";
}

TEST(DependentLaunch, Chain) {
  if (!support::device_available()) GTEST_SKIP() << "no CUDA device";
  cudaStream_t s = nullptr;
  check(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking), "cudaStreamCreateWithFlags");
  const auto direct = [&](cudaStream_t q) { return [q](auto body, auto) { body(q); }; };
  chain(s, "created stream", direct(s));
  chain(s, "created stream, odd shape (aligned copies)", direct(s), odd_shape);
  chain(s, "created stream, few rows (split)", direct(s), split_shape);
  check(cudaStreamDestroy(s), "cudaStreamDestroy");
  chain(nullptr, "default stream", direct(nullptr));
  chain(nullptr, "default stream, few rows (split)", direct(nullptr), split_shape);
}

TEST(DependentLaunch, ChainInAGraph) {
  if (!support::device_available()) GTEST_SKIP() << "no CUDA device";
  cudaStream_t s = nullptr;
  check(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking), "cudaStreamCreateWithFlags");
  const auto replay = [&](auto body, auto renew) {
    cudaGraph_t graph = nullptr;
    cudaGraphExec_t exec = nullptr;
    check(cudaStreamBeginCapture(s, cudaStreamCaptureModeThreadLocal), "cudaStreamBeginCapture");
    body(s);
    check(cudaStreamEndCapture(s, &graph), "cudaStreamEndCapture");
    check(cudaGraphInstantiate(&exec, graph, 0), "cudaGraphInstantiate");
    check(cudaGraphLaunch(exec, s), "cudaGraphLaunch");
    check(cudaStreamSynchronize(s), "cudaStreamSynchronize");
    renew();
    check(cudaGraphLaunch(exec, s), "cudaGraphLaunch (again)");
    check(cudaStreamSynchronize(s), "cudaStreamSynchronize");
    check(cudaGraphExecDestroy(exec), "cudaGraphExecDestroy");
    check(cudaGraphDestroy(graph), "cudaGraphDestroy");
  };
  chain(s, "graph", replay);
  chain(s, "graph, odd shape (aligned copies)", replay, odd_shape);
  chain(s, "graph, few rows (split)", replay, split_shape);
  check(cudaStreamDestroy(s), "cudaStreamDestroy");
}

}  // namespace
}  // namespace tessel::test
