// tessel/cuda/launch.hpp — blocks and warps on NVIDIA GPUs, and the kernel launcher.
//
// A block is `warps` warps of 32 lanes; its shared arena is the block's
// dynamic shared memory (128-byte aligned). launch<Kernel, MaxThreads>() runs
// Kernel::run(ctx, params) in every block of a grid_x × grid_y × grid_z grid;
// the entry point is compiled with __launch_bounds__(MaxThreads, blocks_per_sm). Every CUDA
// call is checked, and a failure throws tessel::Error naming the call and the
// launch shape. A kernel whose schedule asks for a workspace (global scratch
// of one launch: schedule::workspace<Op>(params, grid) -> bytes and how many
// leading bytes must be zero; schedule::attach<Op>(params, pointer, grid))
// gets it stream-ordered from tessel's memory pool of the device (which keeps
// what it once held), zeroed there (zero_workspace), and freed after the kernel in stream
// order; under stream capture the allocation belongs to the graph. A kernel
// whose schedule waits for the stream's previous kernel itself
// (waits_for_predecessor: the sm90 TMA schedule) is launched with programmatic
// stream serialization, so that its blocks may start while that kernel ends
// (unless TESSEL_CUDA_DEPENDENT_LAUNCH=never). Include only from CUDA
// translation units.
#pragma once
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <map>
#include <mutex>
#include <string>
#include <tuple>
#include <type_traits>

#include <cuda_runtime.h>

#include "tessel/core/scope.hpp"
#include "tessel/error.hpp"
#include "tessel/cuda/arch/grid_dependency.hpp"
#include "tessel/cuda/sm90_trace.hpp"

namespace tessel::cuda {

inline constexpr int warp_lanes = 32;

// Global scratch a schedule needs for one launch: `bytes` in all, the first `zeroed` of them zero.
struct workspace_need {
  std::size_t bytes, zeroed;
};

struct context {
  TESSEL_DEVICE int block_x() const { return int(blockIdx.x); }
  TESSEL_DEVICE int block_y() const { return int(blockIdx.y); }
  TESSEL_DEVICE int block_z() const { return int(blockIdx.z); }
  TESSEL_DEVICE int grid_x() const { return int(gridDim.x); }
  TESSEL_DEVICE int grid_z() const { return int(gridDim.z); }
  TESSEL_DEVICE int warp() const { return int(threadIdx.x) / warp_lanes; }
  TESSEL_DEVICE int lane() const { return int(threadIdx.x) % warp_lanes; }
  TESSEL_DEVICE int thread() const { return int(threadIdx.x); }
  TESSEL_DEVICE int threads() const { return int(blockDim.x); }
  TESSEL_DEVICE void sync() const { __syncthreads(); }
  TESSEL_DEVICE float shfl_xor(float v, int mask) const { return __shfl_xor_sync(0xffffffffu, v, mask); }
  TESSEL_DEVICE char* smem() const {
    extern __shared__ __align__(128) char tessel_smem[];
    return tessel_smem;
  }
};

// The context of a block whose size is known when compiling: threads() is a
// constant, so block-wide loops (tile copies) unroll with their addresses hoisted.
template <int Threads> struct fixed_context : context {
  static constexpr int block_threads = Threads;
  TESSEL_DEVICE int threads() const { return Threads; }
};

// The blocks per SM a kernel's configuration asks the compiler to fit
// (cfg::blocks_per_sm, default 1): registers per lane are bounded by
// 65536 / (Threads · blocks).
template <class Kernel, class = void> struct blocks_per_sm {
  static constexpr int value = 1;
};
template <class Kernel> struct blocks_per_sm<Kernel, std::void_t<decltype(Kernel::cfg::blocks_per_sm)>> {
  static constexpr int value = Kernel::cfg::blocks_per_sm;
};

// What a kernel's entry receives: Kernel::params where the kernel has them
// (a pipeline kernel whose schedule prepares them on the host), else its problem.
template <class Kernel, class = void> struct params_of_t {
  using type = typename Kernel::problem;
};
template <class Kernel> struct params_of_t<Kernel, std::void_t<typename Kernel::params>> {
  using type = typename Kernel::params;
};
template <class Kernel> using params_of = typename params_of_t<Kernel>::type;

// Whether a kernel's schedule asks for a workspace per launch.
template <class Kernel, class = void> struct asks_workspace : std::false_type {};
template <class Kernel>
struct asks_workspace<Kernel, std::void_t<decltype(Kernel::schedule::template workspace<typename Kernel::op>(
                                  std::declval<const typename Kernel::params&>(), 0))>> : std::true_type {};

// Whether a kernel's schedule waits for the stream's previous kernel itself
// (schedule::waits_for_predecessor: arch/grid_dependency.hpp), so that it may
// be launched with programmatic stream serialization.
template <class Kernel, class = void> struct waits_for_predecessor : std::false_type {};
template <class Kernel>
struct waits_for_predecessor<Kernel, std::void_t<decltype(Kernel::schedule::waits_for_predecessor)>>
    : std::bool_constant<Kernel::schedule::waits_for_predecessor> {};

// Whether such kernels are launched to overlap their predecessor: yes, unless
// TESSEL_CUDA_DEPENDENT_LAUNCH=never (every launch then waits for the one
// before it to end, as a plain launch does).
inline bool dependent_launch_enabled() {
  static const bool on = [] {
    const char* e = std::getenv("TESSEL_CUDA_DEPENDENT_LAUNCH");
    return e == nullptr || std::strcmp(e, "never") != 0;
  }();
  return on;
}

// tessel's stream-ordered memory pool on `device`, made once per process. Its
// release threshold is unlimited: what it holds stays mapped for the next launch.
inline cudaMemPool_t workspace_pool(int device) {
  static std::mutex m;
  static std::map<int, cudaMemPool_t> pools;
  const std::lock_guard<std::mutex> lock(m);
  const auto it = pools.find(device);
  if (it != pools.end()) return it->second;
  cudaMemPoolProps props{};
  props.allocType = cudaMemAllocationTypePinned;
  props.location.type = cudaMemLocationTypeDevice;
  props.location.id = device;
  cudaMemPool_t pool = nullptr;
  cudaError_t e = cudaMemPoolCreate(&pool, &props);
  if (e == cudaSuccess) {
    std::uint64_t keep = ~std::uint64_t(0);
    e = cudaMemPoolSetAttribute(pool, cudaMemPoolAttrReleaseThreshold, &keep);
  }
  if (e != cudaSuccess)
    throw Error(std::string("tessel cuda backend: creating the workspace memory pool of device ") +
                std::to_string(device) + " failed: " + cudaGetErrorName(e) + " (" + cudaGetErrorString(e) + ")");
  pools[device] = pool;
  return pool;
}

// Whether Kernel's op's policy runs only as sm_90a code (policy_sm90.hpp's sm90a_only): the dispatchers
// launch such a kernel only where its sm_90a image runs (policy_choice.hpp's use_sm90).
template <class Kernel, class = void> struct sm90a_only_kernel : std::false_type {};
template <class Kernel>
struct sm90a_only_kernel<Kernel, std::void_t<decltype(Kernel::op::policy::sm90a_only)>>
    : std::bool_constant<Kernel::op::policy::sm90a_only> {};

// In a device pass for any other target, an sm_90a-only kernel is a trap: its
// body is never compiled there, where it would never run (for sm_80 that cost
// ~35 s of a 16-bit GEMM unit's ~150 s compile on a 2-vCPU VM).
template <class Kernel, class Params, int Threads>
__global__ void __launch_bounds__(Threads, blocks_per_sm<Kernel>::value) kernel_entry(const __grid_constant__ Params params) {
#if TESSEL_DEVICE_PASS && !defined(__CUDA_ARCH_FEAT_SM90_ALL)
  if constexpr (sm90a_only_kernel<Kernel>::value) __trap();
  else
#endif
  {
    fixed_context<Threads> ctx;
    Kernel::run(ctx, params);
  }
}

inline std::string describe(const launch_shape& s) {
  return "grid " + std::to_string(s.grid_x) + "x" + std::to_string(s.grid_y) + "x" + std::to_string(s.grid_z) + ", " +
         std::to_string(s.warps) + " warps, " + std::to_string(s.smem_bytes) + " bytes of shared memory" +
         (s.cluster_x > 1 ? ", clusters of " + std::to_string(s.cluster_x) : std::string());
}

inline void check(cudaError_t e, const char* call, const launch_shape& s) {
  if (e == cudaSuccess) return;
  throw Error(std::string("tessel cuda backend: ") + call + " failed: " + cudaGetErrorName(e) + " (" +
              cudaGetErrorString(e) + "), " + describe(s));
}

// Facts about a kernel entry on a device, worked out once per process (the
// shared memory it opted in to; whether it is sm_90a code on a CC 9.0 device;
// how many of its clusters fit at once; whether its code on the device is
// sm_90 or later).
// Keyed by the entry's address, not kept in a template's static: such a static
// is one object per process (a GNU unique symbol) even across two shared
// libraries that each carry tessel, whose entries are different functions.
enum class fact { smem_opt_in, runs_sm90, active_clusters, sm90_code };
inline std::mutex& entry_facts_mutex() {
  static std::mutex m;
  return m;
}
inline std::map<std::tuple<const void*, int, fact>, int>& entry_facts() {
  static std::map<std::tuple<const void*, int, fact>, int> facts;
  return facts;
}
// The value recorded for (entry, device, what), or -1.
inline int entry_fact(const void* entry, int device, fact what) {
  const std::lock_guard<std::mutex> lock(entry_facts_mutex());
  const auto it = entry_facts().find({entry, device, what});
  return it == entry_facts().end() ? -1 : it->second;
}
inline void set_entry_fact(const void* entry, int device, fact what, int value) {
  const std::lock_guard<std::mutex> lock(entry_facts_mutex());
  entry_facts()[{entry, device, what}] = value;
}

// Whether a kernel that calls arch/grid_dependency.hpp's wait before touching
// memory may be launched on `device` to overlap the stream's previous kernel:
// only where the code the device runs of it is sm_90 or later (below, the
// wait is compiled out), and unless TESSEL_CUDA_DEPENDENT_LAUNCH=never.
inline bool may_overlap_predecessor(const void* entry, int device) {
  if (!dependent_launch_enabled()) return false;
  int known = entry_fact(entry, device, fact::sm90_code);
  if (known < 0) {
    cudaFuncAttributes attr{};
    check(cudaFuncGetAttributes(&attr, entry), "cudaFuncGetAttributes", launch_shape{});
    known = attr.binaryVersion >= 90 ? 1 : 0;
    set_entry_fact(entry, device, fact::sm90_code, known);
  }
  return known == 1;
}

// Lets a launch overlap the stream's previous kernel (programmatic stream
// serialization): appends the attribute at attrs[config.numAttrs]; the kernel
// must wait (arch/grid_dependency.hpp) before touching memory.
inline void allow_overlap(cudaLaunchConfig_t& config, cudaLaunchAttribute* attrs) {
  attrs[config.numAttrs].id = cudaLaunchAttributeProgrammaticStreamSerialization;
  attrs[config.numAttrs].val.programmaticStreamSerializationAllowed = 1;
  config.attrs = attrs;
  ++config.numAttrs;
}

// entry<<<grid, block, 0, stream>>>(args...), allowed to overlap the stream's
// previous kernel where `overlapped` (the kernel then waits for it itself):
// the small kernels around a GEMM (zero_workspace, operand_copy.hpp's copies).
template <class... Params, class... Args>
cudaError_t launch_maybe_overlapped(void (*entry)(Params...), dim3 grid, dim3 block, cudaStream_t stream,
                                    bool overlapped, Args... args) {
  cudaLaunchConfig_t config{};
  cudaLaunchAttribute attribute[1];
  config.gridDim = grid;
  config.blockDim = block;
  config.stream = stream;
  if (overlapped) allow_overlap(config, attribute);
  return cudaLaunchKernelEx(&config, entry, args...);
}

// Zeroes the 16-byte words [0, n) at p: the leading bytes of a workspace that
// a schedule wants zero. One warp, so that it fits on an SM beside a running
// GEMM block. Launched to overlap (zero_workspace), it lets the stream's next
// kernel start at once and waits for the kernel before it (whose workspace the
// pool may have handed on) before it writes. A template: a header may define it.
template <class Word>
__global__ void __launch_bounds__(32) zero_words_kernel(Word* p, std::size_t n) {
  arch::grid_dependents_launch();
  arch::grid_dependency_wait();
  for (std::size_t i = threadIdx.x; i < n; i += 32) p[i] = Word{};
}

// Zeroes the first `bytes` of a workspace `ws` (a multiple of 16) in stream
// order before the kernel that uses it. A memset between two kernels breaks
// their dependent launch: the kernel after it is launched only once the
// memset is done (H200, split GEMMs: 3.4-4.4 µs from the last block's exit to
// the next launch's first entry). The zeroing kernel, launched to overlap,
// keeps the chain: previous kernel -> zeroing -> the kernel, each launched
// as the one before lets it, each waiting for it before touching memory
// (+4 to +13% on few-row GEMMs against the memset and plain launches;
// bench/notes/cuda_gemm.md).
// `overlapped`: zeroing_overlaps(device); where overlap is off
// (TESSEL_CUDA_DEPENDENT_LAUNCH=never, or code before sm_90), a plain
// cudaMemsetAsync. Returns the first error; throws nothing.
inline bool zeroing_overlaps(int device) {
  return may_overlap_predecessor(reinterpret_cast<const void*>(&zero_words_kernel<uint4>), device);
}
inline cudaError_t zero_workspace(void* ws, std::size_t bytes, cudaStream_t stream, bool overlapped) {
  if (bytes == 0) return cudaSuccess;
  if (bytes % 16 != 0) return cudaErrorInvalidValue;
  if (!overlapped) return cudaMemsetAsync(ws, 0, bytes, stream);
  return launch_maybe_overlapped(&zero_words_kernel<uint4>, dim3(1), dim3(32), stream, true, static_cast<uint4*>(ws),
                                 bytes / 16);
}

// Makes `device` current for the scope of an op and restores the caller's
// current device afterwards (tensors on cuda:1 run on cuda:1).
class device_scope {
 public:
  explicit device_scope(int device) {
    const cudaError_t e = cudaGetDevice(&previous_);
    if (e != cudaSuccess) throw Error(std::string("tessel cuda backend: cudaGetDevice failed: ") + cudaGetErrorString(e));
    if (previous_ != device) {
      const cudaError_t s = cudaSetDevice(device);
      if (s != cudaSuccess)
        throw Error("tessel cuda backend: cudaSetDevice(" + std::to_string(device) + ") failed: " + cudaGetErrorString(s));
    }
  }
  ~device_scope() {
    int now = previous_;
    if (cudaGetDevice(&now) == cudaSuccess && now != previous_) (void)cudaSetDevice(previous_);
  }
  device_scope(const device_scope&) = delete;
  device_scope& operator=(const device_scope&) = delete;

 private:
  int previous_ = 0;
};

// Enqueues Kernel on `stream` (nullptr: the default stream) and returns without waiting.
// Threads is the block size, fixed when compiling (shape.warps must match): the
// kernel's launch bound (255 registers per lane at 256 threads) and the
// context's constant threads(). Errors of the launch
// itself are thrown here; errors while the kernel runs surface at the caller's
// next synchronisation.
template <class Kernel, int Threads, class Params>
void launch(const launch_shape& shape, const Params& params, cudaStream_t stream) {
  if (shape.grid_x == 0 || shape.grid_y == 0 || shape.grid_z == 0) return;
  const int threads = shape.warps * warp_lanes;
  if (threads != Threads)
    throw Error("tessel cuda backend: a block of " + std::to_string(threads) + " threads, but the kernel is compiled for " +
                std::to_string(Threads) + "; " + describe(shape));
  auto* entry = &kernel_entry<Kernel, Params, Threads>;
  const int cluster = shape.cluster_x;
  if (cluster < 1 || shape.grid_x % cluster != 0)
    throw Error("tessel cuda backend: a cluster of " + std::to_string(cluster) + " blocks does not divide the grid; " +
                describe(shape));
  int device = 0;
  check(cudaGetDevice(&device), "cudaGetDevice", shape);
  if (shape.smem_bytes > 48 * 1024 &&
      entry_fact(reinterpret_cast<const void*>(entry), device, fact::smem_opt_in) != shape.smem_bytes) {
    // Above 48 KiB a kernel must opt in, once per device.
    int limit = 0;
    check(cudaDeviceGetAttribute(&limit, cudaDevAttrMaxSharedMemoryPerBlockOptin, device),
          "cudaDeviceGetAttribute(cudaDevAttrMaxSharedMemoryPerBlockOptin)", shape);
    if (shape.smem_bytes > limit)
      throw Error("tessel cuda backend: the kernel needs " + std::to_string(shape.smem_bytes) +
                  " bytes of shared memory per block, device " + std::to_string(device) + " allows " +
                  std::to_string(limit) + "; " + describe(shape));
    check(cudaFuncSetAttribute(entry, cudaFuncAttributeMaxDynamicSharedMemorySize, shape.smem_bytes),
          "cudaFuncSetAttribute(cudaFuncAttributeMaxDynamicSharedMemorySize)", shape);
    set_entry_fact(reinterpret_cast<const void*>(entry), device, fact::smem_opt_in, shape.smem_bytes);
  }
  launch_shape run = shape;
  cudaLaunchConfig_t config{};
  cudaLaunchAttribute attribute[2];
  config.blockDim = dim3(unsigned(threads));
  config.dynamicSmemBytes = std::size_t(shape.smem_bytes);
  config.stream = stream;
  config.attrs = attribute;
  if (cluster > 1) {
    attribute[0].id = cudaLaunchAttributeClusterDimension;
    attribute[0].val.clusterDim.x = unsigned(cluster);
    attribute[0].val.clusterDim.y = attribute[0].val.clusterDim.z = 1;
    config.numAttrs = 1;
  }
  if (shape.persistent) {  // at most the blocks (whole clusters) that fit at once; run() strides over the rest
    long long fit = 0;
    if (cluster > 1) {
      int clusters = entry_fact(reinterpret_cast<const void*>(entry), device, fact::active_clusters);
      if (clusters < 0) {
        config.gridDim = dim3(unsigned(shape.grid_x), 1, 1);
        check(cudaOccupancyMaxActiveClusters(&clusters, entry, &config), "cudaOccupancyMaxActiveClusters", shape);
        if (clusters < 1)
          throw Error("tessel cuda backend: not one cluster of " + std::to_string(cluster) +
                      " blocks fits on device " + std::to_string(device) + "; " + describe(shape));
        set_entry_fact(reinterpret_cast<const void*>(entry), device, fact::active_clusters, clusters);
      }
      fit = (long long)clusters * cluster;
    } else {
      int sms = 0;
      check(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device), "cudaDeviceGetAttribute", shape);
      fit = (long long)sms * blocks_per_sm<Kernel>::value;
    }
    if (run.grid_x > fit) run.grid_x = int(fit);
  }
  config.gridDim = dim3(unsigned(run.grid_x), unsigned(shape.grid_y), unsigned(shape.grid_z));
  if (waits_for_predecessor<Kernel>::value && dependent_launch_enabled()) {
    // The kernel's blocks may start while the stream's previous kernel runs
    // (where that one lets them); they wait for it before touching memory.
    allow_overlap(config, attribute);
  }
  if constexpr (asks_workspace<Kernel>::value) {
    using S = typename Kernel::schedule;
    using Op = typename Kernel::op;
    const workspace_need need = S::template workspace<Op>(params, run.grid_x);
    if (need.bytes > 0) {
      const bool overlapped = zeroing_overlaps(device);  // may throw: before the allocation
      void* ws = nullptr;
      check(cudaMallocFromPoolAsync(&ws, need.bytes, workspace_pool(device), stream),
            "cudaMallocFromPoolAsync (the schedule's workspace)", run);
      Params with = params;
      S::template attach<Op>(with, ws, run.grid_x);
      cudaError_t e = zero_workspace(ws, need.zeroed, stream, overlapped);
      if (e == cudaSuccess) e = cudaLaunchKernelEx(&config, entry, with);
      const cudaError_t f = cudaFreeAsync(ws, stream);
      check(e, "kernel launch with its workspace (zero_workspace, cudaLaunchKernelEx)", run);
      check(f, "cudaFreeAsync (the schedule's workspace)", run);
      TESSEL_SM90_TRACED(sm90_trace::dump<<<1, 1, 0, stream>>>();)
      TESSEL_SM90_SPANNED(if (shape.persistent) sm90_spans::after_launch(stream, run.grid_x);)
      return;
    }
  }
  check(cudaLaunchKernelEx(&config, entry, params), "kernel launch (cudaLaunchKernelEx)", run);
  TESSEL_SM90_TRACED(sm90_trace::dump<<<1, 1, 0, stream>>>();)
  TESSEL_SM90_SPANNED(if (shape.persistent) sm90_spans::after_launch(stream, run.grid_x);)
}

}  // namespace tessel::cuda
