// tessel/cpu/policy_simd.hpp — the CPU policy on the SIMD FMA atom (AVX2 / AVX-512 via xsimd).
//
// simd_policy<Arch, Tuning, AttnTuning>: its attention side (the attention
// tile ops on the column atom; configuration in attention_config.hpp) is its
// base class, simd_attention_ops in attention_simd.hpp. Its GEMM side is a
// GotoBLAS-style GEMM (configuration and packed layouts in gemm_config.hpp)
// expressed through the kernel's tile ops:
//   shared tiles  micro-panel packed fp32 (gemm_config.hpp's packed_a / packed_b)
//   load          global -> packed, converting fp16/bf16 on SIMD registers,
//                 zero outside the matrix (the masked edge of partial tiles)
//   mma           the register-blocked micro-kernel: for each MR × NR micro-tile
//                 of the block's accumulator, C stays in MR·NR/W registers for
//                 the whole packed K chunk (W = float lanes of Arch); a unit's
//                 first step starts from zeroed registers (mma_overwrites)
//   store         epilogue alpha / beta (C not read when beta == 0), masked
//                 edges, fp32 / fp16 / bf16 out rounded like core/element.hpp,
//                 row by row of C across a fragment row's whole fragments,
//                 C's lines two rows ahead asked for while a row is written
//   schedule      packed_schedule (schedule_packed.hpp): the raster's runs of
//                 block rows × block columns run step-major as one group, so
//                 a step's packed A tile is reused along its row of the run
//                 and its packed B tiles down their columns, instead of being
//                 packed again for each unit
// Every fast path computes what the generic op computes on the same layouts
// and atom (fma per k, in k order; zeros in the padding).
//
// ODR: everything here is a template on Arch (or always inlined), so the AVX2
// and AVX-512 translation units never share an out-of-line instantiation;
// that is also why the policy has its own launcher (its arena type is per Arch).
#pragma once
#include <atomic>
#include <cmath>
#include <cstddef>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <new>
#include <type_traits>
#include <utility>
#include <vector>

#include <tbb/enumerable_thread_specific.h>
#include <tbb/parallel_for.h>
#include <tbb/task_arena.h>

#include "tessel/core/scope.hpp"
#include "tessel/core/tile_ops.hpp"
#include "tessel/cpu/arch/convert.hpp"
#include "tessel/cpu/attention_simd.hpp"
#include "tessel/cpu/atom/simd.hpp"
#include "tessel/cpu/gemm_config.hpp"
#include "tessel/cpu/launch.hpp"
#include "tessel/cpu/schedule_packed.hpp"

namespace tessel::cpu {

// Calls f(integral_constant<int, I>) for I = 0 .. N-1, fully unrolled.
template <class F, int... I> TESSEL_HOST_DEVICE void static_for_impl(F&& f, std::integer_sequence<int, I...>) {
  (f(std::integral_constant<int, I>{}), ...);
}
template <int N, class F> TESSEL_HOST_DEVICE void static_for(F&& f) {
  static_for_impl(f, std::make_integer_sequence<int, N>{});
}

// A oneTBB range of block indices, a distinct type per Arch: with
// tbb::blocked_range<long> the AVX-512 object would carry its own copy of
// oneTBB's range_vector<blocked_range<long>>::split_to_fill (with VEX/EVEX
// code), which the linker may also hand to the baseline path.
template <class Arch> struct block_range {
  long first, last;
  block_range(long f, long l) : first(f), last(l) {}
  block_range(block_range& r, tbb::split) : first(r.first + (r.last - r.first) / 2), last(r.last) { r.last = first; }
  bool empty() const { return first >= last; }
  bool is_divisible() const { return last - first > 1; }
};

// Whether Kernel's schedule runs chunks of work ids (Kernel::schedule::ranged).
template <class Kernel, class = void> struct ranged_schedule : std::false_type {};
template <class Kernel>
struct ranged_schedule<Kernel, std::void_t<decltype(Kernel::schedule::ranged)>>
    : std::bool_constant<Kernel::schedule::ranged> {};

template <class Arch> struct simd_arena {
  struct release {
    void operator()(char* p) const { std::free(p); }
  };
  std::unique_ptr<char, release> data;
  std::size_t size = 0;
  char* get(std::size_t bytes) {
    if (bytes > size) {
      const std::size_t rounded = (bytes + 4095) / 4096 * 4096;
      data.reset(static_cast<char*>(std::aligned_alloc(4096, rounded)));
      if (!data) throw std::bad_alloc();
      size = rounded;
    }
    return data.get();
  }
};

// AttnTuning: the attention path's shapes (attention_config.hpp's
// simd_attention_config; attention_simd.hpp, the policy's base, has the
// attention tile ops).
template <class Arch, class Tuning, class AttnTuning> struct simd_policy : simd_attention_ops<Arch, AttnTuning> {
  using attention_ops = simd_attention_ops<Arch, AttnTuning>;
  using attention_ops::broadcast_rows;
  using attention_ops::load;
  using attention_ops::map;
  using attention_ops::mma;
  using attention_ops::row_reduce;
  using attention_ops::store;

  static constexpr int lanes = 1;
  using context = cpu::context;
  using vec = xsimd::batch<float, Arch>;
  static constexpr int W = int(vec::size);
  static constexpr int MR = Tuning::MR, NR = Tuning::NR, BM = Tuning::BM, BN = Tuning::BN, BK = Tuning::BK;
  using atom = simd_atom<Arch, MR, NR>;
  static_assert(valid_atom<atom>(), "simd atom: maps must cover its tiles");
  static_assert(BM % 8 == 0 && (MR % 8 == 0 || 8 % MR == 0) && NR % 8 == 0 && NR % W == 0 && BK % W == 0,
                "simd_policy: packing moves 8 lines × W at a time");

  template <class TIn, class TOut = TIn> using gemm_config = simd_gemm_config<simd_policy, Tuning>;
  template <class T, int D> using attention_config = simd_attention_config<simd_policy, Arch, AttnTuning, T, D>;

  // ---- global -> packed shared (block scope) ---------------------------------
  template <class Ctx, int R, int C, class TS>
  static void load(Ctx&, st<float, packed_a<R, C, MR>> dst, const gmatrix<TS>& src, int row0, int col0) {
    pack<MR, R, C>(dst.data, src.addr(row0, col0), src.row_stride, src.col_stride, src.rows - row0, src.cols - col0);
    packed_a<R, C, MR>::extent::set(dst.data, clamp(src.rows - row0, R), clamp(src.cols - col0, C));
  }
  template <class Ctx, int R, int C, class TS>
  static void load(Ctx&, st<float, packed_b<R, C, NR>> dst, const gmatrix<TS>& src, int row0, int col0) {
    pack<NR, C, R>(dst.data, src.addr(row0, col0), src.col_stride, src.row_stride, src.cols - col0, src.rows - row0);
    packed_b<R, C, NR>::extent::set(dst.data, clamp(src.cols - col0, C), clamp(src.rows - row0, R));
  }

  // ---- packed shared -> accumulator (warp scope) -----------------------------
  // c += a · b, or c = a · b where accumulate is false (core/tile_ops.hpp,
  // mma_overwrites): a unit's first step then starts its micro-tiles from
  // zeroed registers instead of zeroing the accumulator in memory and loading
  // it back (a 96 KiB store and load per AVX-512 unit; a GEMM of one K step,
  // K <= BK, has nothing else between the packs and the epilogue).
  template <class Ctx, int TM, int TN, int R, int C, int RB, int CB>
  static void mma(Ctx& ctx, rt<atom, operand::c, TM, TN>& c, st<float, packed_a<R, C, MR>> a,
                  st<float, packed_b<RB, CB, NR>> b, int a_row0, int b_col0, bool accumulate) {
    static_assert(C == RB, "mma: A's K must equal B's K");
    if (a_row0 % MR != 0 || b_col0 % NR != 0) {  // not on panel boundaries: the portable path
      portable_mma(ctx, c, a, b, a_row0, b_col0, accumulate);
      return;
    }
    int a_lines, a_depth, b_lines, b_depth;
    packed_a<R, C, MR>::extent::get(a.data, a_lines, a_depth);
    packed_b<RB, CB, NR>::extent::get(b.data, b_lines, b_depth);
    const int depth = a_depth < b_depth ? a_depth : b_depth;  // beyond: zeros on both sides
    const int tm = clamp((a_lines - a_row0 + MR - 1) / MR, TM), tn = clamp((b_lines - b_col0 + NR - 1) / NR, TN);
    const float* pa = a.data + (a_row0 / MR) * MR * C;
    const float* pb = b.data + (b_col0 / NR) * NR * C;
    for (int j = 0; j < TN; ++j)
      for (int i = 0; i < TM; ++i) {
        if (i < tm && j < tn) {
          if (accumulate) micro_kernel<true>(pa + i * MR * C, pb + j * NR * C, c.frag[i][j], depth);
          else micro_kernel<false>(pa + i * MR * C, pb + j * NR * C, c.frag[i][j], depth);
        } else if (!accumulate) {  // all padding: a product of zeros
          std::memset(c.frag[i][j], 0, sizeof c.frag[i][j]);
        }
      }
  }
  template <class Ctx, int TM, int TN, int R, int C, int RB, int CB>
  static void mma(Ctx& ctx, rt<atom, operand::c, TM, TN>& c, st<float, packed_a<R, C, MR>> a,
                  st<float, packed_b<RB, CB, NR>> b, int a_row0, int b_col0) {
    mma(ctx, c, a, b, a_row0, b_col0, true);
  }

  // ---- accumulator -> global: the epilogue (warp scope) ----------------------
  template <class Ctx, int TM, int TN, class TD>
  static void store(Ctx&, const gmatrix<TD>& dst, const rt<atom, operand::c, TM, TN>& t, int row0, int col0,
                    float alpha, float beta) {
    store_fragments(dst, t, row0, col0, alpha, beta);
  }

  // ---- launcher ---------------------------------------------------------------
  // A kernel whose schedule is ranged (packed_schedule) gets one oneTBB task
  // per worker and one segment of the work ids per worker
  // (Schedule::segment_start); a task claims runs of ids from its own
  // segment's counter, then from the others' in turn (Schedule::claim_end; its
  // tail by the op's unit costs, Schedule::work_costs),
  // and runs them with run_range(), so that one worker runs neighbouring ids
  // and reuses their packed tiles, in an arena that the thread keeps across
  // launches (thread_arena), while the workers stay far apart in the space. Any other kernel
  // (a config on the ring schedule, as the tests' ring policies) gets one oneTBB task
  // per block and a per-launch arena per worker, as before.
  template <class Kernel, class Params>
  static void launch(const launch_shape& shape, const Params& params, int threads) {
    const long blocks = long(shape.grid_x) * shape.grid_z;
    if (blocks == 0) return;
    const std::size_t bytes = std::size_t(shape.smem_bytes) + 64;
    auto run = [&] {
      if constexpr (ranged_schedule<Kernel>::value) {
        using schedule = typename Kernel::schedule;
        using op = typename Kernel::op;
        const int workers = tbb::this_task_arena::max_concurrency();
        struct alignas(64) segment {  // ids [next, end) not yet claimed; one cache line each
          std::atomic<long> next;
          long end;
        };
        const std::unique_ptr<segment[]> segs(new segment[std::size_t(workers)]);
        for (int t = 0; t < workers; ++t) {
          segs[t].next.store(schedule::template segment_start<op>(params, t, workers, blocks), std::memory_order_relaxed);
          segs[t].end = schedule::template segment_start<op>(params, t + 1, workers, blocks);
        }
        const auto costs = workers > 1 ? typename schedule::template work_costs<op>(params)
                                       : typename schedule::template work_costs<op>();
        std::atomic<long> unclaimed{costs.of(0, blocks)};  // the cost of the launch's unclaimed ids: claim_end's tail
        tbb::parallel_for(block_range<Arch>(0, workers), [&](const block_range<Arch>& task) {
          context ctx{0, shape.grid_z, 0, thread_arena(bytes)};
          // What the policy holds for the whole task (the AMX policy: the tile configuration).
          [[maybe_unused]] const typename schedule::task_scope hold{};
          for (int i = 0; i < workers; ++i) {  // its own segment first, then the others' in turn
            segment& seg = segs[std::size_t((task.first + i) % workers)];
            for (long first = seg.next.load(std::memory_order_relaxed); first < seg.end;) {
              const long end = schedule::template claim_end<op>(params, costs, first, seg.end, workers,
                                                                unclaimed.load(std::memory_order_relaxed));
              if (!seg.next.compare_exchange_weak(first, end, std::memory_order_relaxed)) continue;  // first reloaded
              unclaimed.fetch_sub(costs.of(first, end), std::memory_order_relaxed);
              schedule::template run_range<op>(ctx, params, first, end);
              first = seg.next.load(std::memory_order_relaxed);
            }
          }
        });
      } else {
        tbb::enumerable_thread_specific<simd_arena<Arch>> arenas;  // one per worker, for this launch
        tbb::parallel_for(block_range<Arch>(0, blocks), [&](const block_range<Arch>& range) {
          char* arena = arenas.local().get(bytes);
          for (long blk = range.first; blk != range.last; ++blk) {
            context ctx{int(blk % shape.grid_x), shape.grid_z, int(blk / shape.grid_x), arena};
            Kernel::run(ctx, params);
          }
        });
      }
    };
    with_threads(threads, run);
  }

  // The calling thread's arena for ranged kernels, at least `bytes` long. It
  // lives as long as the thread and only grows (to the largest smem_bytes + 64
  // of the ranged kernels the thread ran: 3.88 MiB for the AVX2 GEMM, 1.06 MiB
  // for the AVX-512 one, whatever the problem size; a call touches only the
  // slots and states it uses), so repeated calls reuse pages that are already
  // mapped: a fresh 1.1 MiB buffer per launch cost ~270 page faults, 5-9 % of
  // a 512^3 GEMM. run_range() never yields to oneTBB, so one thread never has
  // two claims in flight on its arena.
  static char* thread_arena(std::size_t bytes) {
    static thread_local simd_arena<Arch> arena;
    return arena.get(bytes);
  }

 protected:
  TESSEL_HOST_DEVICE static int clamp(int v, int hi) { return v < 0 ? 0 : v < hi ? v : hi; }

  // The portable product (generic_tile_ops) for operands off the fast path's
  // boundaries, with the fast path's contract: C overwritten where accumulate is false.
  template <class Ctx, class CTile, class ATile, class BTile>
  static void portable_mma(Ctx& ctx, CTile& c, ATile a, BTile b, int a_row0, int b_col0, bool accumulate) {
    if (!accumulate) generic_tile_ops::zero(c);
    generic_tile_ops::mma(ctx, c, a, b, a_row0, b_col0);
  }

  template <class Atom> static constexpr bool row_major_c() {
    for (int v = 0; v < Atom::c_values; ++v)
      if (Atom::c_coord(0, v).row != v / Atom::N || Atom::c_coord(0, v).col != v % Atom::N) return false;
    return true;
  }
  // The epilogue of any accumulator whose C fragments are contiguous row-major
  // Atom::M × Atom::N blocks (this policy's atom; the AMX atom, policy_amx.hpp):
  // whole fragments of row-major C on vectors, the rest element by element.
  template <class Atom, int TM, int TN, class TD>
  static void store_fragments(const gmatrix<TD>& dst, const rt<Atom, operand::c, TM, TN>& t, int row0, int col0,
                              float alpha, float beta) {
    constexpr int FR = Atom::M, FC = Atom::N;
    static_assert(Atom::lanes == 1 && Atom::c_values == FR * FC && FC % W == 0 && row_major_c<Atom>(),
                  "store_fragments: one lane's row-major C fragments of whole vectors");
    // Row-major C: the whole fragments of a fragment row are written row by
    // row of C (TN · FC contiguous columns at a time, one stream the hardware
    // prefetcher follows), the edge fragments element by element. While a row
    // is written, the lines of the row PF rows below (this unit's) are asked
    // for, so that the stores find them in cache instead of each waiting on
    // its line (bench/notes/cpu_gemm.md, session 51: the AMX GEMM's epilogue).
    for (int i = 0; i < TM; ++i) {
      const int r0 = row0 + i * FR;
      if (r0 >= dst.rows) continue;
      int whole = 0;  // fragments j < whole are inside C
      if (r0 + FR <= dst.rows && dst.col_stride == 1)
        while (whole < TN && col0 + (whole + 1) * FC <= dst.cols) ++whole;
      for (int r = 0; r < FR && whole > 0; ++r) {
        constexpr int PF = 2;
        const int ahead = r0 + r + PF;
        if (ahead < dst.rows && (r + PF < FR || i + 1 < TM)) {
          const char* next = reinterpret_cast<const char*>(dst.addr(ahead, col0));
          const int bytes = whole * FC * int(sizeof(TD));
          for (int b = 0; b < bytes; b += 64) __builtin_prefetch(next + b, 1, 3);
        }
        for (int j = 0; j < whole; ++j) store_row<FC>(dst, t.frag[i][j] + r * FC, r0 + r, col0 + j * FC, alpha, beta);
      }
      for (int j = whole; j < TN; ++j) {
        const int c0 = col0 + j * FC;
        if (c0 < dst.cols) store_any<FR, FC>(dst, t.frag[i][j], r0, c0, alpha, beta);
      }
    }
  }

  // Packs Lines × Depth elements (line l, depth d at src[l·ls + d·ds]) into
  // panels of P lines: (l, d) -> (l/P)·P·Depth + d·P + l%P. Elements with
  // l >= lines or d >= depth (outside the matrix) are 0.
  template <int P, int Lines, int Depth, class TS>
  static void pack(float* dst, const TS* src, std::int64_t ls, std::int64_t ds, int lines, int depth) {
    lines = lines < Lines ? lines : Lines;
    depth = depth < Depth ? depth : Depth;
    if (ds == 1 && Depth > 1) pack_transposed<P, Lines, Depth>(dst, src, ls, lines, depth);
    else pack_direct<P, Lines, Depth>(dst, src, ls, ds, lines, depth);
  }

  template <int P, int Depth>
  TESSEL_HOST_DEVICE static float& at(float* dst, int l, int d) {
    return dst[(l / P) * (P * Depth) + d * P + l % P];
  }
  template <int P, int Depth, class TS>
  TESSEL_HOST_DEVICE static void pack_scalar(float* dst, const TS* src, std::int64_t ls, std::int64_t ds, int l0, int l1,
                                             int d0, int d1, int lines, int depth) {
    for (int d = d0; d < d1; ++d)
      for (int l = l0; l < l1; ++l) at<P, Depth>(dst, l, d) = (l < lines && d < depth) ? to_float(src[l * ls + d * ds]) : 0.0f;
  }

  // Lines contiguous in memory (ls == 1): each depth slice is a run of floats.
  template <int P, int Lines, int Depth, class TS>
  static void pack_direct(float* dst, const TS* src, std::int64_t ls, std::int64_t ds, int lines, int depth) {
    if (ls != 1) {  // neither stride is 1 only for a single line or a single depth slice
      pack_scalar<P, Depth>(dst, src, ls, ds, 0, Lines, 0, Depth, lines, depth);
      return;
    }
    const int full = lines / W * W;
    for (int d = 0; d < Depth; ++d) {
      if (d >= depth) {
        pack_scalar<P, Depth>(dst, src, ls, ds, 0, Lines, d, d + 1, 0, 0);
        continue;
      }
      const TS* s = src + d * ds;
      for (int l = 0; l < full; l += W) {
        alignas(64) float tmp[W];
        load_as_float<Arch>(s + l).store_aligned(tmp);
        // W lines: W / P whole panels (P < W) or a part of one panel (P % W == 0)
        for (int q = 0; q < W; q += (P < W ? P : W))
          std::memcpy(&at<P, Depth>(dst, l + q, d), tmp + q, sizeof(float) * (P < W ? P : W));
      }
      pack_scalar<P, Depth>(dst, src, ls, ds, full, Lines, d, d + 1, lines, depth);
    }
  }

  // Depth contiguous in memory (ds == 1): 8 lines × W depth values are read as
  // 8 vectors and transposed into W rows of 8 lines.
  template <int P, int Lines, int Depth, class TS>
  static void pack_transposed(float* dst, const TS* src, std::int64_t ls, int lines, int depth) {
    static_assert(Lines % 8 == 0 && Depth % W == 0, "pack: tiles are whole 8 × W blocks");
    for (int l = 0; l < Lines; l += 8)
      for (int d = 0; d < Depth; d += W) {
        if (l + 8 > lines || d + W > depth) {
          pack_scalar<P, Depth>(dst, src, ls, 1, l, l + 8, d, d + W, lines, depth);
          continue;
        }
        vec v[8];
        for (int q = 0; q < 8; ++q) v[q] = load_as_float<Arch>(src + (l + q) * ls + d);
        if constexpr (P % 8 == 0) {
          isa_ops<Arch>::transpose8(v, &at<P, Depth>(dst, l, d), P);
        } else {  // P = 4 or 2: the 8 lines span 8 / P panels
          alignas(64) float tmp[W * 8];
          isa_ops<Arch>::transpose8(v, tmp, 8);
          for (int k = 0; k < W; ++k)
            for (int q = 0; q < 8; q += P) std::memcpy(&at<P, Depth>(dst, l + q, d + k), tmp + k * 8 + q, sizeof(float) * P);
        }
      }
  }

  // C(MR × NR, row-major, at c) += A panel (MR × depth, k-major) · B panel (depth × NR, k-major);
  // C = A · B where Accumulate is false (C is not read).
  template <bool Accumulate> static void micro_kernel(const float* a, const float* b, float* c, int depth) {
    constexpr int NV = NR / W;
    vec acc[MR][NV];
    static_for<MR>([&](auto r) {
      static_for<NV>([&](auto v) {
        if constexpr (Accumulate) acc[r][v] = vec::load_aligned(c + r * NR + v * W);
        else acc[r][v] = vec(0.0f);
      });
    });
    for (int k = 0; k < depth; ++k) {
      vec bv[NV];
      static_for<NV>([&](auto v) { bv[v] = vec::load_aligned(b + k * NR + v * W); });
      static_for<MR>([&](auto r) {
        const vec av(a[k * MR + r]);
        static_for<NV>([&](auto v) { acc[r][v] = xsimd::fma(av, bv[v], acc[r][v]); });
      });
    }
    static_for<MR>([&](auto r) { static_for<NV>([&](auto v) { acc[r][v].store_aligned(c + r * NR + v * W); }); });
  }

  // One row of FC values of a whole fragment (t: its row) into row-major C at (r, c0).
  template <int FC, class TD>
  static void store_row(const gmatrix<TD>& dst, const float* t, int r, int c0, float alpha, float beta) {
    const vec va(alpha), vb(beta);
    TD* p = dst.addr(r, c0);
    for (int n = 0; n < FC; n += W) {
      vec out = va * vec::load_aligned(t + n);
      if (beta != 0.0f) out = isa_ops<Arch>::fma(vb, load_as_float<Arch>(p + n), out);  // as store_any's std::fma
      store_from_float<Arch>(p + n, out);
    }
  }
  // Edge fragments and column-major C: element by element, same arithmetic.
  template <int FR, int FC, class TD>
  static void store_any(const gmatrix<TD>& dst, const float* t, int r0, int c0, float alpha, float beta) {
    const int rows = dst.rows - r0 < FR ? dst.rows - r0 : FR, cols = dst.cols - c0 < FC ? dst.cols - c0 : FC;
    for (int n = 0; n < cols; ++n)
      for (int r = 0; r < rows; ++r) {
        TD* p = dst.addr(r0 + r, c0 + n);
        float out = alpha * t[r * FC + n];
        if (beta != 0.0f) out = std::fma(beta, to_float(*p), out);
        *p = convert<TD>(out);
      }
  }
};

}  // namespace tessel::cpu
