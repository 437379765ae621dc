// tessel/ops/attention/kernel.hpp — attention forward (FlashAttention 2), written once.
//
// One block owns BQ query rows of one (batch, head); its consumer units (warps,
// or warpgroups where the atom is group-scope) split those rows (WQ = BQ /
// units each), so every softmax row lives in one unit. K and V flow past in
// BKV-row tiles through the schedule's shared stages. Per tile:
//   S = Q·Kᵀ (raw; masked: keys past kv_len, and the causal triangle aligned
//       bottom-right, to −inf), c = scale·log2(e)
//   m' = max(m, rowmax S);  P = exp2(c·S − b');  l = l·exp2(b − b') + rowsum P
//   O = O·exp2(b − b') + P·V    (P as an A operand: in registers, or via shared memory)
// with b = c·m rounded once, and at the end O /= l, LSE = ln2·(b + log2 l).
// A row that saw no key (or only −inf scores) keeps m = −inf, l = 0 and is
// written as zeros with LSE = −inf; a NaN score (NaN in q or k, or an infinite
// score) makes the row's out and LSE NaN. The scale rides in the exp2's fused
// multiply-add (exp2_of_difference), not in a pass over S; the rescale
// exp2(b − b') is exactly 1 while the maximum stands still.
//
//   P::attention_config<T, D>: its contract (required and optional members,
//     defaults, checks) is core/attention_contract.hpp. p_in_registers: P
//     feeds P·V straight from registers (P::relayout + the register-A mma) —
//     no shared P tile, one block barrier per KV tile instead of two.
//   Asynchronous mma (P::mma_wait): S is waited for before the softmax; P·V
//     is left in flight over the end of the step (retire<N> waits for it), so
//     that it runs on the tensor cores back to back with the next step's Q·Kᵀ.
//   For schedules with a copy engine (tensor maps): operand 0 is Q (resident,
//     one copy per work unit), 1 Kᵀ and 2 V (per step); a layer is a
//     (batch, head) pair, heads grouped per batch entry (grouped_layers). The
//     epilogue stores through the policy (any out and LSE strides), so the op
//     names no output.
#pragma once
#include <cstdint>
#include <type_traits>

#include "tessel/core/attention_contract.hpp"
#include "tessel/core/math.hpp"
#include "tessel/core/pipeline.hpp"
#include "tessel/core/scope.hpp"
#include "tessel/core/tile_ops.hpp"
#include "tessel/core/turn_ring.hpp"
#include "tessel/ops/attention/unit_order.hpp"

namespace tessel::ops {

template <class T> struct attention_problem {
  const T* q;
  const T* k;
  const T* v;
  T* out;
  std::int64_t q_bs, q_ss, q_hs, k_bs, k_ss, k_hs, v_bs, v_ss, v_hs, o_bs, o_ss, o_hs;
  float* lse;
  std::int64_t l_bs, l_hs, l_ss;
  int batch, heads, kv_heads, q_len, kv_len;
  bool causal;
  float scale_log2;  // scale · log2(e)
};

// The schedule a config names (default: the portable ring).
template <class P, class Cfg, class = void> struct attention_schedule_of_config {
  using type = ring_schedule<P, Cfg::stages>;
};
template <class P, class Cfg> struct attention_schedule_of_config<P, Cfg, std::void_t<typename Cfg::schedule>> {
  using type = typename Cfg::schedule;
};

// Cfg: the policy's config, or the one it names for calls without a causal
// mask (non_causal_config_of; ops/attention/dispatch.hpp picks per call).
template <class P, class T, int D, class Cfg = typename P::template attention_config<T, D>> struct attention_stages {
  using cfg = Cfg;
  using config = attention_config_of<cfg, D>;  // core/attention_contract.hpp: checks and defaults
  using atom = typename config::atom;
  using smem_t = typename config::smem_type;
  static constexpr bool p_regs = config::p_in_registers;
  // The type P has when it meets V, and whether l's additions are compensated:
  // where P stays fp32 (CPU), l's roundings (2^-24 per KV tile) would grow past
  // P's own; where P is rounded to bf16 / fp16 for P·V (2^-9, 2^-12), l's stay
  // far below it (under 1.6e-5 at 32k keys), and the compensation would only
  // add operations per row and tile.
  using p_type = std::conditional_t<p_regs, typename atom::a_type, smem_t>;
  static constexpr bool compensate_l = std::is_same_v<p_type, float>;
  static constexpr bool keep_b = config::keep_scaled_max;
  static constexpr bool turns = config::take_turns;
  using unit = typename config::unit;
  static constexpr int units = config::units;
  using mma_turns = turn_ring<P, units>;  // named only under `if constexpr (turns)`
  static constexpr int BQ = config::BQ, BKV = config::BKV, S = config::stages, WQ = BQ / units;

  using tile_q = st<smem_t, typename cfg::layout_q>;
  using tile_kt = st<smem_t, typename cfg::layout_kt>;
  using tile_v = st<smem_t, typename cfg::layout_v>;
  using tile_p = st<smem_t, typename cfg::layout_p>;
  using s_tile = rt_c<atom, WQ, BKV>;
  using o_tile = rt_c<atom, WQ, D>;
  using problem = attention_problem<T>;
  static_assert(tile_q::rows == BQ && tile_q::cols == D && tile_kt::rows == D && tile_kt::cols == BKV &&
                    tile_v::rows == BKV && tile_v::cols == D && tile_p::rows == BQ && tile_p::cols == BKV,
                "attention: the config's shared layouts have the wrong shapes");

  using schedule = typename attention_schedule_of_config<P, cfg>::type;
  // Bytes of each shared tile, rounded to the schedule's alignment (128; 1024
  // where a copy engine writes 128-byte-swizzled tiles).
  static constexpr int align = schedule::stage_align;
  static constexpr int bytes(int elems) { return (int(sizeof(smem_t)) * elems + align - 1) / align * align; }
  static constexpr int q_bytes = bytes(tile_q::size), kt_bytes = bytes(tile_kt::size);
  static constexpr int v_bytes = bytes(tile_v::size), p_bytes = p_regs ? 0 : bytes(tile_p::size);
  // ---- stage bodies (core/pipeline.hpp) -------------------------------------
  // A work unit is BQ query rows of one (batch, head); a step is one K/V tile.
  // Q (and P where it goes through shared memory) stay resident for the unit.
  using policy = P;
  static constexpr int resident_bytes = q_bytes + p_bytes;
  static constexpr int stage_bytes = kt_bytes + v_bytes;
  struct stage {
    tile_kt kt;
    tile_v v;
  };
  // The stage of a Kᵀ and a V tile kept apart (tiles[1], tiles[2]: schedules with operand slots).
  TESSEL_HOST_DEVICE static stage stage_of(char* const* tiles) {
    return {tile_kt{reinterpret_cast<smem_t*>(tiles[1])}, tile_v{reinterpret_cast<smem_t*>(tiles[2])}};
  }
  // A stage of stage_bytes: the Kᵀ tile, then the V tile.
  TESSEL_HOST_DEVICE static stage stage_at(char* base) {
    char* const tiles[3] = {nullptr, base, base + kt_bytes};
    return stage_of(tiles);
  }
  struct work {
    int b, head, kv_head, q0, kv_tiles;
  };
  TESSEL_HOST_DEVICE static int tiles(const problem& p) { return (p.q_len + BQ - 1) / BQ * p.heads; }
  TESSEL_HOST_DEVICE static int layers(const problem& p) { return p.batch; }
  // The units' order (ops/attention/unit_order.hpp): head by head, or, where
  // the config's heaviest_first_bytes > 0, heaviest first over groups of heads
  // whose K and V fit in that many bytes. uneven_units lets a persistent
  // schedule deal them in alternating rounds (core/pipeline.hpp), which
  // balances costs that fall steadily: one group (a budget that holds every
  // head; sm90's causal hd 64 default, +2-8 % at seq 1k-4k on the H100); over
  // several groups the plain stride balanced better in the model, and on a grid
  // the hardware fills unit by unit the groups measured slower than head by
  // head (bench/notes/cuda_attention.md Run 13).
  static constexpr long long heaviest_first_bytes = config::heaviest_first_bytes;
  static constexpr bool uneven_units = heaviest_first_bytes > 0;
  TESSEL_HOST_DEVICE static work work_at(const problem& p, int tile, int b) {
    const int q_tiles = (p.q_len + BQ - 1) / BQ;
    work w;
    int level;
    if constexpr (heaviest_first_bytes > 0) {
      const int group = kv_heads_per_group(heaviest_first_bytes, 2LL * p.kv_len * D * (long long)sizeof(T), p.batch,
                                           p.kv_heads);
      const attention_unit_place u =
          heaviest_first_unit((long long)b * tiles(p) + tile, p.batch, p.heads, p.kv_heads, q_tiles, group);
      w.b = u.b;
      w.head = u.head;
      level = u.level;
    } else {  // head by head: with a causal mask the late tiles first, which shortens a grid's tail
      w.b = b;
      w.head = tile / q_tiles;
      level = tile % q_tiles;
    }
    w.q0 = (q_tiles - 1 - level) * BQ;
    w.kv_head = w.head / (p.heads / p.kv_heads);
    // Keys visible to this block: all, or (causal) up to the last row's diagonal.
    int kv_end = p.kv_len;
    if (p.causal) {
      const int last_row = (w.q0 + BQ < p.q_len ? w.q0 + BQ : p.q_len) - 1;
      const int shift = p.kv_len - p.q_len;  // query i sees keys j <= i + shift
      kv_end = last_row + shift + 1 < kv_end ? last_row + shift + 1 : kv_end;
    }
    w.kv_tiles = kv_end > 0 ? (kv_end + BKV - 1) / BKV : 0;
    return w;
  }
  TESSEL_HOST_DEVICE static int steps(const problem&, const work& w) { return w.kv_tiles; }
  // The query tiles of the heads that share one K/V head (one head without
  // GQA) read the same Kᵀ and V tiles at each step: a schedule that runs
  // consecutive tiles together (the CPU's packed_schedule) may copy those once
  // for all of them, within such a run (run_end), and cut its tail by the
  // units' steps (unit_cost: causal units differ by up to q_len / BQ).
  static int run_end(const problem& p, int tile) {
    static_assert(heaviest_first_bytes == 0, "attention: run_end describes the head-by-head order");
    const int run = (p.q_len + BQ - 1) / BQ * (p.heads / p.kv_heads);
    return (tile / run + 1) * run;
  }
  static long unit_cost(const problem& p, int tile) {
    static_assert(heaviest_first_bytes == 0, "attention: unit_cost is a tile's in every layer in the head-by-head order");
    const int n = work_at(p, tile, 0).kv_tiles;
    return n > 0 ? n : 1;
  }

  TESSEL_HOST_DEVICE static gmatrix<const T> q_of(const problem& p, const work& w) {
    const T* q = p.q + w.b * p.q_bs + w.head * p.q_hs;
    return {q, p.q_len, D, p.q_ss, 1, vec16(q, p.q_ss)};
  }
  // Kᵀ as a D × kv_len matrix: element (d, j) = k[b, j, kv_head, d].
  TESSEL_HOST_DEVICE static gmatrix<const T> kt_of(const problem& p, const work& w) {
    const T* k = p.k + w.b * p.k_bs + w.kv_head * p.k_hs;
    return {k, D, p.kv_len, 1, p.k_ss, vec16(k, p.k_ss)};
  }
  TESSEL_HOST_DEVICE static gmatrix<const T> v_of(const problem& p, const work& w) {
    const T* v = p.v + w.b * p.v_bs + w.kv_head * p.v_hs;
    return {v, p.kv_len, D, p.v_ss, 1, vec16(v, p.v_ss)};
  }

  // The operands as a copy engine sees them: layer l = b · heads + head (Q)
  // or b · kv_heads + kv_head (K, V), heads grouped per batch entry.
  static constexpr int operand_count = 3, output_count = 0, resident_operands = 1;
  static constexpr bool grouped_layers = true;
  template <int I> using operand_tile = std::conditional_t<I == 0, tile_q, std::conditional_t<I == 1, tile_kt, tile_v>>;
  template <int I> static global_operand<const T> operand(const problem& p) {
    work w0{};
    if constexpr (I == 0) return {q_of(p, w0), p.q_hs, p.heads, p.q_bs, p.batch};
    else if constexpr (I == 1) return {kt_of(p, w0), p.k_hs, p.kv_heads, p.k_bs, p.batch};
    else return {v_of(p, w0), p.v_hs, p.kv_heads, p.v_bs, p.batch};
  }

  template <class Ld> TESSEL_HOST_DEVICE static void load_resident(Ld& ld, char* resident, const problem& p, const work& w) {
    ld.template copy<0>(tile_q{reinterpret_cast<smem_t*>(resident)}, q_of(p, w), w.q0, 0, w.b * p.heads + w.head);
  }
  template <class Ld> TESSEL_HOST_DEVICE static void load(Ld& ld, const stage& s, const problem& p, const work& w, int t) {
    const int layer = w.b * p.kv_heads + w.kv_head;
    ld.template copy<1>(s.kt, kt_of(p, w), 0, t * BKV, layer);
    ld.template copy<2>(s.v, v_of(p, w), t * BKV, 0, layer);
  }
  // The first query row of this unit within the block's BQ.
  template <class U> TESSEL_HOST_DEVICE static int unit_row0(const U& u) {
    if constexpr (unit::warps == 1) return u.warp() * WQ;
    else return u.unit_index() * WQ;
  }

  struct state;  // below row_stats
  template <class U>
  TESSEL_HOST_DEVICE static void start(U&, state& st, const problem&, const work&, char* resident) {
    P::zero(st.o);
    st.rows.reset();
    st.resident = resident;
  }
  template <class U>
  TESSEL_HOST_DEVICE static void compute(U& ctx, state& st, const stage& stg, const problem& p, const work& w, int t) {
    const tile_q sq{reinterpret_cast<smem_t*>(st.resident)};
    const int row0 = unit_row0(ctx);  // this unit's rows within the block
    // Turns (config take_turns, FlashAttention-3's ping-pong): the units issue
    // their MMAs in turn (core/turn_ring.hpp), in blocks {P·V(t − 1), S(t)}:
    // block 0 is S(0), block n is P·V(n − 1) (n steps: n + 1 blocks), and
    // finish() ends the work unit's turns. The stage's full wait lies inside a
    // block; its producer does not wait for the consumers' turns.
    if constexpr (turns)
      if (t == 0) mma_turns::begin(ctx, 0);
    const int shift = p.kv_len - p.q_len;
    const int kv0 = t * BKV, qrow0 = w.q0 + row0;
    const int kv_len = p.kv_len;
    const bool causal = p.causal;
    // This step's mask: keys past kv_len, and (causal) key kv0 + c > qrow0 + r + shift;
    // all_visible: none of this unit's rows meets a hidden key in this tile.
    const hide_keys hide{kv_len - kv0, causal ? qrow0 + shift - kv0 + 1 : kv_len - kv0};
    const bool all_visible = hide.hides_none(BKV);
    // Where some are hidden, S's hidden entries are overwritten by the mask below
    // and P is zero there: a policy with mma_skipping (core/tile_ops.hpp) may
    // skip their products (causal rows that see no key of the step; keys past
    // the unit's last row).
    constexpr bool skip_s = mma_skipping_of<P, U, s_tile, tile_q, tile_kt, masked_c<hide_keys>>::value;
    s_tile sc;
    if (skip_s && !all_visible) {
      if constexpr (skip_s) P::mma_skipping(ctx, sc, sq, stg.kt, row0, 0, masked_c<hide_keys>{hide}, false);
    } else if constexpr (mma_overwrites<P, U, s_tile, tile_q, tile_kt>::value) {
      // Where the policy's mma can overwrite (sm90's wgmma), S is set, not
      // zeroed and added to: a zeroing of S's registers while the previous
      // step's P·V is in flight made ptxas wait for that P·V (C7517).
      P::mma(ctx, sc, sq, stg.kt, row0, 0, false);
    } else {
      P::zero(sc);
      P::mma(ctx, sc, sq, stg.kt, row0, 0);
    }
    if constexpr (turns) mma_turns::end(ctx);
    // S is complete, and so is the previous step's P·V into O (the softmax rescales O).
    P::template mma_wait<0>(sc);
    P::template mma_wait<0>(st.o);
    // S stays raw (the scale rides in the exp2's FMA); masking only where
    // this unit's rows meet a hidden key in this tile.
    if (!all_visible) P::map(ctx, sc, hide);
    online_softmax_step(ctx, sc, p.scale_log2, st.o, st.rows);
    if constexpr (p_regs) {
      rt_a<atom, WQ, BKV> pa;
      P::relayout(ctx, pa, sc);
      if constexpr (turns) mma_turns::begin(ctx, t + 1);
      mma_pv(ctx, st.o, pa, stg.v, 0, hide, all_visible);
      if constexpr (turns)
        if (t == w.kv_tiles - 1) mma_turns::end(ctx);
    } else {
      static_assert(!turns, "attention: take_turns needs P in registers");
      const tile_p sp{reinterpret_cast<smem_t*>(st.resident + q_bytes)};
      P::store(ctx, sp, sc, row0, 0);  // P as this warp's rows of an A operand
      ctx.sync();
      mma_pv(ctx, st.o, sp, stg.v, row0, hide, all_visible);
    }
  }
  // O += P·V, P in shared memory (its rows from p_row0) or in registers
  // (p_row0 0): where some key of the step is hidden, P is zero there, and a
  // policy with mma_skipping (core/tile_ops.hpp) may skip those products.
  template <class U, class PT>
  TESSEL_HOST_DEVICE static void mma_pv(U& ctx, o_tile& o, const PT& p, const tile_v& v, int p_row0,
                                        const hide_keys& hide, bool all_visible) {
    if constexpr (mma_skipping_of<P, U, o_tile, PT, tile_v, masked_a<hide_keys>>::value) {
      if (!all_visible) {
        P::mma_skipping(ctx, o, p, v, p_row0, 0, masked_a<hide_keys>{hide}, true);
        return;
      }
    }
    P::mma(ctx, o, p, v, p_row0, 0);
  }
  // After compute() at most one step's MMAs (its P·V) are in flight: it waited
  // for all before, so retire<N ≥ 1> has nothing to wait for (and touching O
  // there would make ptxas wait for that P·V at once).
  template <int N, class U> TESSEL_HOST_DEVICE static void retire(U&, state& st) {
    if constexpr (N == 0) P::template mma_wait<0>(st.o);
  }
  template <class U, class Out>
  TESSEL_HOST_DEVICE static void finish(U& ctx, Out&, state& st, const problem& p, const work& w) {
    T* const out = p.out + w.b * p.o_bs + w.head * p.o_hs;
    const gmatrix<T> gout{out, p.q_len, D, p.o_ss, 1, vec16(out, p.o_ss)};
    finish(ctx, p, w.b, w.head, w.q0 + unit_row0(ctx), gout, st.o, st.rows);
    if constexpr (turns) mma_turns::end_of_work(ctx, w.kv_tiles > 0 ? w.kv_tiles + 1 : 0);
  }

  // gmatrix::vec16 of a (head_dim-contiguous) view: its base and its sequence
  // stride 16-byte aligned, so backends may copy 16 bytes at a time.
  TESSEL_HOST_DEVICE static bool vec16(const T* base, std::int64_t seq_stride) {
    return reinterpret_cast<std::uintptr_t>(base) % 16 == 0 && seq_stride * std::int64_t(sizeof(T)) % 16 == 0;
  }

  template <class V> TESSEL_DEVICE static void fill(V& vec, float x) {
    constexpr int rows = sizeof(vec.value) / sizeof(vec.value[0]), cols = sizeof(vec.value[0]) / sizeof(float);
    TESSEL_UNROLL for (int i = 0; i < rows; ++i)
      TESSEL_UNROLL for (int v = 0; v < cols; ++v) vec.value[i][v] = x;
  }

  // b = c·m rounded once, −inf for a row without a visible key. The product
  // reaches its users only through this select, so a compiler's multiply-add
  // contraction cannot fold it (and its rounding) into a later subtraction;
  // recomputed from the same m it gives the same bits every time.
  TESSEL_DEVICE static float scaled(float m, float c) { return m == neg_infinity() ? neg_infinity() : m * c; }

  // The softmax state of the rows a lane holds: m, the running maximum of the
  // raw scores, and b = scaled(m, c) where the config keeps it (keep_b); l,
  // the running sum of exp2(c·s − b), and l_lost the low bits its additions
  // dropped (Kahan; compensate_l), so that l's error does not grow with the
  // number of KV tiles. Only the entry of each row's first value (row_rep) is
  // kept up to date: a lane holds 2 rows in 4 values (mma.sync) or in 32-128
  // (wgmma), and the loop-carried copies of one row would each take a register.
  TESSEL_HOST_DEVICE static constexpr int row_rep(int v) {
    return generic_tile_ops::first_in_row<typename o_tile::geometry>(v);
  }
  // f(first) for each row a lane holds (core/atom_traits.hpp's for_each_row_first).
  template <class F> TESSEL_HOST_DEVICE static void row_firsts(F& f) {
    for_each_row_first<typename o_tile::geometry>(f);
  }
  struct row_stats {
    col_vector<o_tile> m, b, l, l_lost;  // b: only where keep_b
    TESSEL_DEVICE void reset() {
      fill(m, neg_infinity());
      fill(b, neg_infinity());
      fill(l, 0.0f);
      fill(l_lost, 0.0f);
    }
  };
  // A warp's registers for one work unit: O, the softmax rows, and where the
  // resident Q (and P) tiles are.
  struct state {
    o_tile o;
    row_stats rows;
    char* resident;
  };

  // On raw scores s, with c = scale·log2(e) > 0, m the running row maximum of
  // the raw scores and b = scaled(m, c):
  //   m' = max(m, rowmax s);  s = exp2(c·s − b') (c·s exact in the fma);
  //   r = exp2(b − b');  l = l·r + rowsum s;  o ·= r.
  // b − b' is a difference of two rounded products: 0 exactly while the
  // maximum stands still (r = 1, nothing drifts however many tiles pass), and
  // exact when it moves by less than half (Sterbenz), so the tiles' factors
  // telescope to exp2(c·s − b_final). (exp2(c·m − b'), as written before, let
  // compilers contract c·m into the subtraction: the kept tiles were scaled by
  // 2^(rounding error of c·m) once per tile.) A row still without a visible
  // key is shifted by 0, so its exp2(−inf) = 0 entries never make NaN. A NaN
  // score is skipped by the maximum (fmaxf) but makes its exp2, and so the
  // row's l and o, NaN. Keeping b beside m measured 5-6% faster at head_dim 64
  // on the H100 than recomputing it, which the CDNA config does instead
  // (keep_scaled_max = false: 16 row values per lane, and the hd128 kernel
  // spilled with b kept). Keeping the maximum in scaled units only,
  // max(m, c·rowmax s), is exact too but ran 1-4% slower on the H100.
  template <class Ctx>
  TESSEL_DEVICE static void online_softmax_step(Ctx& ctx, s_tile& s, float c, o_tile& o, row_stats& rows) {
    col_vector<s_tile> mx, sum;
    P::row_reduce(ctx, mx, s, maximum{});
    col_vector<o_tile> rescale;
    static_assert(s_tile::values == o_tile::values, "attention: S and O tiles of one atom");
    // Per row (its first value, row_firsts): mx and rescale are read there only
    // (broadcast_rows' contract, core/tile_ops.hpp).
    TESSEL_UNROLL for (int i = 0; i < s_tile::tiles_r; ++i) {
      auto row = [&](int v) {
        const float m = rows.m.value[i][v], m_new = maximum{}(m, mx.value[i][v]);
        // b: the last tile's b', kept or recomputed (the same bits either way)
        const float b = keep_b ? rows.b.value[i][v] : scaled(m, c);
        const float base = m_new == neg_infinity() ? 0.0f : m_new * c;
        rescale.value[i][v] = b - base;  // exp2 of it below, all rows at once
        rows.m.value[i][v] = m_new;
        if constexpr (keep_b) rows.b.value[i][v] = scaled(m_new, c);
        mx.value[i][v] = base;
      };
      row_firsts(row);
    }
    P::map_rows(rescale, power_of_two{});
    P::broadcast_rows(s, mx, exp2_of_difference{c});
    P::row_reduce(ctx, sum, s, plus{});
    TESSEL_UNROLL for (int i = 0; i < s_tile::tiles_r; ++i) {
      auto row = [&](int v) {
        const float r = rescale.value[i][v];
        if constexpr (compensate_l) {  // l·r + sum; l_lost: what the rounding of `next` dropped
          const float l = rows.l.value[i][v] * r, add = sum.value[i][v] - rows.l_lost.value[i][v] * r;
          const float next = l + add;
          rows.l_lost.value[i][v] = (next - l) - add;
          rows.l.value[i][v] = next;
        } else {
          rows.l.value[i][v] = rows.l.value[i][v] * r + sum.value[i][v];
        }
      };
      row_firsts(row);
    }
    P::broadcast_rows(o, rescale, multiply{});
  }

  template <class Ctx>
  TESSEL_DEVICE static void finish(Ctx& ctx, const problem& p, int b, int head, int qrow0, const gmatrix<T>& gout,
                                   o_tile& o, const row_stats& rows) {
    // l = 0: the row saw no key, or only −inf scores: zeros (even where a
    // hidden NaN or Inf in v made 0·v NaN in P·V), LSE = −inf. A NaN l (a NaN
    // or +inf score) makes the row and its LSE NaN.
    col_vector<o_tile> inv;
    TESSEL_UNROLL for (int i = 0; i < o_tile::tiles_r; ++i) {
      auto row = [&](int v) {
        const float l = rows.l.value[i][v] - rows.l_lost.value[i][v];
        inv.value[i][v] = l == 0.0f ? 0.0f : 1.0f / l;
      };
      row_firsts(row);
    }
    P::broadcast_rows(o, inv, multiply_or_zero{});
    P::store(ctx, gout, o, qrow0, 0, 1.0f, 0.0f);
    if (p.lse == nullptr) return;
    const int lane = ctx.lane();
    float* lse = p.lse + b * p.l_bs + head * p.l_hs;
    constexpr float ln2 = 0.6931471805599453f;
    TESSEL_UNROLL for (int i = 0; i < o_tile::tiles_r; ++i)
      TESSEL_UNROLL for (int v = 0; v < o_tile::values; ++v) {
        const coord x = o_tile::where(lane, i, 0, v);
        if (x.col != o_tile::where(lane, 0, 0, 0).col) continue;  // one writer column per lane
        const int row = qrow0 + x.row;
        if (row >= p.q_len) continue;
        const int e = row_rep(v);
        const float l = rows.l.value[i][e] - rows.l_lost.value[i][e];
        const float b = keep_b ? rows.b.value[i][e] : scaled(rows.m.value[i][e], p.scale_log2);
        lse[row * p.l_ss] = l == 0.0f ? neg_infinity() : ln2 * (b + fast_log2(l));
      }
  }
};

template <class P, class T, int D, class Cfg = typename P::template attention_config<T, D>>
using attention_kernel =
    pipeline_kernel<attention_stages<P, T, D, Cfg>, typename attention_stages<P, T, D, Cfg>::schedule>;

}  // namespace tessel::ops
