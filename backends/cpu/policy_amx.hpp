// tessel/cpu/policy_amx.hpp — the AMX CPU policy: bf16-in GEMM on the tile registers, the rest on a SIMD policy.
//
// amx_policy<Base, Tiles, Tuning, AttnTuning> is Base (a simd_policy: GEMMs and
// attention of fp32 / fp16 inputs) plus, for bf16 inputs, an attention
// configuration (attention_amx.hpp: its softmax tile ops; the loads and the mma
// below) and a GEMM configuration (gemm_config.hpp's amx_gemm_config) whose
// tile ops are:
//   shared tiles  bf16 panels in the tile registers' byte order (amx_a, amx_b:
//                 1 KiB sub-tiles, A row by row, B in VNNI pairs)
//   load          global -> panels: 64-byte row copies (K-contiguous A), pair
//                 interleaves (N-contiguous B), 32-bit transposes of pairs
//                 (K-contiguous B; M-contiguous A after an interleave),
//                 element by element otherwise and at edges;
//                 zero outside the matrix, and the extent tail written
//   mma           a 32 × 32 micro-block of C at a time in tile registers 0-3
//                 (C00 C01 / C10 C11), two A sub-tiles in 4-5 and two B
//                 sub-tiles in 6-7 per 32-deep slice: four tdpbf16ps per slice;
//                 slices and micro-blocks that are all padding skipped;
//                 mma_skipping (attention): also the micro-blocks of S whose
//                 entries a mask all hides, and P·V's slices past a
//                 micro-block row's last visible key
//   store         simd_policy's epilogue on the 16 × 16 row-major fragments
//   schedule      packed_schedule on the raster's runs (Tuning::run_rows × run_cols)
// Attention takes the same loads (Q as A, Kᵀ and V as B panels) and mma (S = Q·Kᵀ,
// O += P·V with P stored as an A panel), on packed_schedule: AttnTuning::group
// query tiles of a head step-major, each step's Kᵀ and V panels packed once.
// Tiles is amx_hw (the instructions) or amx_emulated (arch/amx.hpp): the same
// code, testable without AMX. The tile configuration's lifetime: a worker task
// of a ranged launch holds it (task_scope, which packed_schedule names to the
// launcher: loaded at the task's start, the tiles released at its end); an mma
// outside any hold (a per-block launch, a direct call) loads it and releases
// the tiles around itself. So nothing of the tile state outlives a task or a
// call, or depends on which thread ran the last one.
// Every fast path computes what the generic tile ops compute on the same
// layouts and the AMX atom (one atom per 32-deep slice, in slice order).
#pragma once
#include <cstdint>
#include <cstring>
#include <type_traits>

#include "tessel/core/element.hpp"
#include "tessel/core/tile_ops.hpp"
#include "tessel/cpu/arch/amx.hpp"
#include "tessel/cpu/arch/isa_ops.hpp"  // specialised by Base's arch header (avx2.hpp, avx512.hpp)
#include "tessel/cpu/atom/amx.hpp"
#include "tessel/cpu/attention_amx.hpp"
#include "tessel/cpu/gemm_config.hpp"

namespace tessel::cpu {

// Blocks 128 × 128 × 256 (A 64 KiB, B 64 KiB of bf16, the accumulator 64 KiB),
// runs of 4 block rows × 4 block columns: each A tile packed once per 4 column
// blocks, each B tile once per 4 row blocks (the tile instructions leave the
// packing a larger share of the time than on the fp32 paths).
using amx_default_tuning = amx_tuning<128, 128, 256, 2, 4, 4>;
// Attention: 64 query rows × 64 keys per step, two stages, groups of 8 query
// tiles sharing each step's Kᵀ and V panels (bench/notes/cpu_attention.md).
using amx_default_attention_tuning = amx_attention_tuning<64, 64, 2, 8>;
// The same with 128 keys per step: O's tile loads and stores and its rescale
// once per 128 keys. The library takes it where amx_wide_attention_pays: more
// than 64 keys, causal or not (on the Xeon at 1 thread, hd 128, seq 1k-2k:
// non-causal 1.04-1.11x SDPA against 0.85-0.97x for 64 keys, session 56; causal
// behind 64 keys until P's exp2 stopped underflowing on the diagonal's masked
// scores (arch/exp2.hpp's weight form), then ahead: bench/notes/cpu_attention.md,
// session 59).
using amx_wide_attention_tuning = amx_attention_tuning<64, 128, 2, 8>;
inline bool amx_wide_attention_pays(int kv_len) { return kv_len > 64; }

// Whether this thread holds the tile configuration of Tiles (amx_policy::task_scope): one flag per
// provider, whichever policy (AVX2 or AVX-512 base) took the hold.
template <class Tiles> inline bool& amx_tiles_held() {
  static thread_local bool held = false;
  return held;
}

template <class Base, class Tiles, class Tuning, class AttnTuning = amx_default_attention_tuning>
struct amx_policy : amx_attention_ops<Base, AttnTuning> {
  using attention_ops = amx_attention_ops<Base, AttnTuning>;
  using attention_ops::load;
  using attention_ops::mma;
  using attention_ops::mma_skipping;
  using attention_ops::store;

  using amx_config = amx_gemm_config<amx_policy, Tuning>;
  template <class T, int D>
  using attention_config = std::conditional_t<std::is_same_v<T, bf16>, amx_attention_config<amx_policy, AttnTuning, D>,
                                              typename Base::template attention_config<T, D>>;
  template <class TIn, class TOut = TIn>
  using gemm_config =
      std::conditional_t<std::is_same_v<TIn, bf16>, amx_config, typename Base::template gemm_config<TIn, TOut>>;

  // A worker task's hold on the tile configuration (packed_schedule::task_scope):
  // loaded once here, the tiles released when it ends; a hold inside a hold
  // does nothing. An mma inside it loads no configuration (two ldtilecfg and
  // two tilerelease fewer per attention step).
  struct task_scope {
    bool owner = !amx_tiles_held<Tiles>();
    task_scope() {
      if (owner) {
        Tiles::configure();
        amx_tiles_held<Tiles>() = true;
      }
    }
    ~task_scope() {
      if (owner) {
        Tiles::release();
        amx_tiles_held<Tiles>() = false;
      }
    }
    task_scope(const task_scope&) = delete;
    task_scope& operator=(const task_scope&) = delete;
  };

  // ---- global -> panels (block scope) ----------------------------------------
  template <class Ctx, int R, int C, class TS>
  static void load(Ctx&, st<bf16, amx_a<R, C>> dst, const gmatrix<TS>& src, int row0, int col0) {
    static_assert(std::is_same_v<std::remove_const_t<TS>, bf16>, "amx load: bf16 sources only");
    const int lines = Base::clamp(src.rows - row0, R), depth = Base::clamp(src.cols - col0, C);
    for (int p = 0; p < R / 16; ++p)
      for (int s = 0; s < C / 32; ++s) {
        std::uint16_t* sub = bits(dst.data) + (p * (C / 32) + s) * 512;
        const int r0 = p * 16, k0 = s * 32;
        const bool whole = r0 + 16 <= lines && k0 + 32 <= depth;
        if (whole && src.col_stride == 1) {  // whole rows of 64 bytes
          for (int r = 0; r < 16; ++r) std::memcpy(sub + r * 32, src.addr(row0 + r0 + r, col0 + k0), 64);
        } else if (whole && src.row_stride == 1) {  // columns of A: pair columns k, k+1 per row, then transpose the pairs
          alignas(64) std::uint32_t pairs[16][16];  // [k / 2][row]
          for (int kp = 0; kp < 16; ++kp) {
            const std::uint16_t* e = bits(src.addr(row0 + r0, col0 + k0 + 2 * kp));
            pair_up(e, e + src.col_stride, pairs[kp]);
          }
          transpose_pairs(reinterpret_cast<const char*>(&pairs[0][0]), 64, sub);
        } else {
          for (int r = 0; r < 16; ++r)
            for (int k = 0; k < 32; ++k) sub[r * 32 + k] = element(src, row0, col0, r0 + r, k0 + k, lines, depth);
        }
      }
    amx_a<R, C>::extent::set(dst.data, lines, depth);
  }
  template <class Ctx, int R, int C, class TS>
  static void load(Ctx&, st<bf16, amx_b<R, C>> dst, const gmatrix<TS>& src, int row0, int col0) {
    static_assert(std::is_same_v<std::remove_const_t<TS>, bf16>, "amx load: bf16 sources only");
    const int depth = Base::clamp(src.rows - row0, R), lines = Base::clamp(src.cols - col0, C);
    for (int p = 0; p < C / 16; ++p)
      for (int s = 0; s < R / 32; ++s) {
        std::uint16_t* sub = bits(dst.data) + (p * (R / 32) + s) * 512;
        const int n0 = p * 16, k0 = s * 32;
        const bool whole = n0 + 16 <= lines && k0 + 32 <= depth;
        if (whole && src.col_stride == 1) {  // rows of B: interleave rows k and k + 1
          for (int kp = 0; kp < 16; ++kp) {
            const std::uint16_t* e = bits(src.addr(row0 + k0 + 2 * kp, col0 + n0));
            pair_up(e, e + src.row_stride, sub + kp * 32);
          }
        } else if (whole && src.row_stride == 1) {  // columns of B: each a run of 16 pairs; transpose the pairs
          transpose_pairs(reinterpret_cast<const char*>(src.addr(row0 + k0, col0 + n0)),
                          src.col_stride * std::int64_t(sizeof(bf16)), sub);
        } else {
          for (int kp = 0; kp < 16; ++kp)
            for (int n = 0; n < 16; ++n)
              for (int q = 0; q < 2; ++q)
                sub[kp * 32 + 2 * n + q] = element(src, row0, col0, k0 + 2 * kp + q, n0 + n, depth, lines);
        }
      }
    amx_b<R, C>::extent::set(dst.data, lines, depth);
  }

  // ---- panels -> accumulator (warp scope) --------------------------------------
  // c += a · b, or c = a · b where accumulate is false (mma_overwrites, as the
  // SIMD policy's): C's tile registers start from tilezero instead of a load.
  template <class Ctx, int TM, int TN, int R, int C, int RB, int CB>
  static void mma(Ctx& ctx, rt<amx_atom, operand::c, TM, TN>& c, st<bf16, amx_a<R, C>> a, st<bf16, amx_b<RB, CB>> b,
                  int a_row0, int b_col0, bool accumulate) {
    mma_blocks(ctx, c, a, b, a_row0, b_col0, accumulate, [](int) { return 1 << 30; }, [](int) { return 1 << 30; });
  }
  template <class Ctx, int TM, int TN, int R, int C, int RB, int CB>
  static void mma(Ctx& ctx, rt<amx_atom, operand::c, TM, TN>& c, st<bf16, amx_a<R, C>> a, st<bf16, amx_b<RB, CB>> b,
                  int a_row0, int b_col0) {
    mma(ctx, c, a, b, a_row0, b_col0, true);
  }
  // mma_skipping (core/tile_ops.hpp): micro-block row i (C's rows 32i ..
  // 32i + 31) without the micro-blocks whose columns all its rows hide
  // (masked_c: attention's S; zeroed where accumulate is false) or without the
  // 32-deep slices past its last visible key (masked_a: attention's P is zero
  // there): hidden_from of the micro-block's last row, which never falls as the
  // row grows, bounds what every row of it needs.
  template <class Ctx, int TM, int TN, int R, int C, int RB, int CB, class Mask>
  static void mma_skipping(Ctx& ctx, rt<amx_atom, operand::c, TM, TN>& c, st<bf16, amx_a<R, C>> a,
                           st<bf16, amx_b<RB, CB>> b, int a_row0, int b_col0, masked_c<Mask> skip, bool accumulate) {
    mma_blocks(
        ctx, c, a, b, a_row0, b_col0, accumulate, [&](int i) { return skip.mask.hidden_from(32 * i + 31); },
        [](int) { return 1 << 30; });
  }
  template <class Ctx, int TM, int TN, int R, int C, int RB, int CB, class Mask>
  static void mma_skipping(Ctx& ctx, rt<amx_atom, operand::c, TM, TN>& c, st<bf16, amx_a<R, C>> a,
                           st<bf16, amx_b<RB, CB>> b, int a_row0, int b_col0, masked_a<Mask> skip, bool accumulate) {
    mma_blocks(
        ctx, c, a, b, a_row0, b_col0, accumulate, [](int) { return 1 << 30; },
        [&](int i) { return skip.mask.hidden_from(32 * i + 31); });
  }

  // The mma on 32 × 32 micro-blocks; micro-block row i computes the column
  // micro-blocks j with 32j < col_end(i) (the others zeroed where accumulate is
  // false, else kept) over the slices before depth_end(i).
  template <class Ctx, int TM, int TN, int R, int C, int RB, int CB, class ColEnd, class DepthEnd>
  static void mma_blocks(Ctx& ctx, rt<amx_atom, operand::c, TM, TN>& c, st<bf16, amx_a<R, C>> a,
                         st<bf16, amx_b<RB, CB>> b, int a_row0, int b_col0, bool accumulate, ColEnd col_end,
                         DepthEnd depth_end) {
    static_assert(C == RB, "mma: A's K must equal B's K");
    if constexpr (TM % 2 != 0 || TN % 2 != 0) {
      Base::portable_mma(ctx, c, a, b, a_row0, b_col0, accumulate);
    } else {
      if (a_row0 % 32 != 0 || b_col0 % 32 != 0) {  // not on micro-block boundaries: the portable path
        Base::portable_mma(ctx, c, a, b, a_row0, b_col0, accumulate);
        return;
      }
      int a_lines, a_depth, b_lines, b_depth;
      amx_a<R, C>::extent::get(a.data, a_lines, a_depth);
      amx_b<RB, CB>::extent::get(b.data, b_lines, b_depth);
      const int depth = a_depth < b_depth ? a_depth : b_depth;  // beyond: zeros on both sides
      const int slices = (depth + 31) / 32;
      const int tm = Base::clamp((a_lines - a_row0 + 31) / 32, TM / 2);
      const int tn = Base::clamp((b_lines - b_col0 + 31) / 32, TN / 2);
      if (!accumulate)  // micro-blocks of padding only, which the loop below skips, are a product of zeros
        for (int i = 0; i < TM / 2; ++i)
          for (int j = 0; j < TN / 2; ++j)
            if (i >= tm || j >= tn || slices == 0)
              for (int q = 0; q < 4; ++q) std::memset(c.frag[2 * i + q / 2][2 * j + q % 2], 0, sizeof c.frag[0][0]);
      if (slices == 0 || tm == 0 || tn == 0) return;
      constexpr std::int64_t row = 64;  // bytes per tile row, in the panels and in the fragments
      const bool own = !amx_tiles_held<Tiles>();  // outside a task's hold: configure and release here
      if (own) Tiles::configure();
      for (int j = 0; j < tn; ++j) {
        const bf16* b0 = b.data + (b_col0 / 16 + 2 * j) * (RB / 32) * 512;
        const bf16* b1 = b0 + (RB / 32) * 512;
        for (int i = 0; i < tm; ++i) {
          const bf16* a0 = a.data + (a_row0 / 16 + 2 * i) * (C / 32) * 512;
          const bf16* a1 = a0 + (C / 32) * 512;
          float* c00 = c.frag[2 * i][2 * j];
          float* c01 = c.frag[2 * i][2 * j + 1];
          float* c10 = c.frag[2 * i + 1][2 * j];
          float* c11 = c.frag[2 * i + 1][2 * j + 1];
          if (32 * j >= col_end(i)) {  // columns every row of this micro-block row hides
            if (!accumulate)
              for (float* f : {c00, c01, c10, c11}) std::memset(f, 0, sizeof c.frag[0][0]);
            continue;
          }
          const int need = (depth_end(i) + 31) / 32, used = need < 0 ? 0 : need < slices ? need : slices;
          if (used == 0 && accumulate) continue;
          if (accumulate) {
            Tiles::template load<0>(c00, row);
            Tiles::template load<1>(c01, row);
            Tiles::template load<2>(c10, row);
            Tiles::template load<3>(c11, row);
          } else {
            Tiles::template zero<0>();
            Tiles::template zero<1>();
            Tiles::template zero<2>();
            Tiles::template zero<3>();
          }
          for (int s = 0; s < used; ++s) {
            Tiles::template load<4>(a0 + s * 512, row);
            Tiles::template load<6>(b0 + s * 512, row);
            Tiles::template dp<0, 4, 6>();
            Tiles::template load<7>(b1 + s * 512, row);
            Tiles::template dp<1, 4, 7>();
            Tiles::template load<5>(a1 + s * 512, row);
            Tiles::template dp<2, 5, 6>();
            Tiles::template dp<3, 5, 7>();
          }
          Tiles::template store<0>(c00, row);
          Tiles::template store<1>(c01, row);
          Tiles::template store<2>(c10, row);
          Tiles::template store<3>(c11, row);
        }
      }
      if (own) Tiles::release();
    }
  }
  // ---- accumulator -> global: the epilogue (warp scope) ------------------------
  template <class Ctx, int TM, int TN, class TD>
  static void store(Ctx&, const gmatrix<TD>& dst, const rt<amx_atom, operand::c, TM, TN>& t, int row0, int col0,
                    float alpha, float beta) {
    Base::store_fragments(dst, t, row0, col0, alpha, beta);
  }

 private:
  // dst (64 bytes) = the 16 pairs (e[i], o[i]), e in the low half of each 32
  // bits: two widening loads and a shift-or per vector.
  static void pair_up(const std::uint16_t* e, const std::uint16_t* o, void* dst) {
    using ops = isa_ops<typename Base::vec::arch_type>;
    constexpr int W = int(Base::vec::size);
    static_assert(16 % W == 0, "pair_up: 16 pairs are whole vectors");
    for (int q = 0; q < 16; q += W)
      (ops::load_u16(e + q) | (ops::load_u16(o + q) << 16)).store_unaligned(static_cast<std::int32_t*>(dst) + q);
  }
  // sub-tile row q (16 pairs of 32 bits) = column q of the 16 lines of 16 pairs
  // at `lines` (line l at lines + l · ld bytes, any alignment): 8 lines × W pairs
  // at a time through the SIMD transpose (isa_ops::transpose8), as float bits
  // (moves only: no value is converted or canonicalised).
  static void transpose_pairs(const char* lines, std::int64_t ld, std::uint16_t* sub) {
    using vec = typename Base::vec;
    using arch = typename vec::arch_type;
    constexpr int W = int(vec::size);
    static_assert(16 % W == 0, "transpose_pairs: 16 pairs are whole vectors");
    float* out = reinterpret_cast<float*>(sub);
    for (int l0 = 0; l0 < 16; l0 += 8)
      for (int q0 = 0; q0 < 16; q0 += W) {
        vec v[8];
        for (int l = 0; l < 8; ++l)
          v[l] = vec::load_unaligned(reinterpret_cast<const float*>(lines + (l0 + l) * ld + 4 * q0));
        isa_ops<arch>::transpose8(v, out + q0 * 16 + l0, 16);
      }
  }
  static std::uint16_t* bits(bf16* p) { return reinterpret_cast<std::uint16_t*>(p); }
  static const std::uint16_t* bits(const bf16* p) { return reinterpret_cast<const std::uint16_t*>(p); }
  // Source element (i, j) of the tile at (row0, col0) as bits; 0 outside the
  // valid rows × cols of the tile.
  template <class TS>
  static std::uint16_t element(const gmatrix<TS>& src, int row0, int col0, int i, int j, int rows, int cols) {
    return i < rows && j < cols ? src.addr(row0 + i, col0 + j)->bits : std::uint16_t(0);
  }
};

}  // namespace tessel::cpu
