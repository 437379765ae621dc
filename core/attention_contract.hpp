// tessel/core/attention_contract.hpp — what a backend's attention configuration must and may provide.
//
// P::attention_config<T, D> (a backend's attention_config.hpp) is a struct with
//   must: using atom;  using smem_type;
//         static constexpr int BQ, BKV;     query rows per block, keys per K/V tile
//         static constexpr int warps;       warps per block; each owns BQ / warps query rows
//         static constexpr int stages;      K/V tiles in the ring (>= 2)
//         using layout_q;   BQ × D   (A operand)
//         using layout_kt;  D × BKV  (B operand, read from K's rows)
//         using layout_v;   BKV × D  (B operand)
//         using layout_p;   BQ × BKV (A operand; unused where P stays in registers)
//   may:  static constexpr bool p_in_registers;   (default false) the atom's C
//                 fragment is its A fragment (c_feeds_a): P feeds P·V from registers
//         static constexpr bool keep_scaled_max;  (default true) false: recompute each
//                 row's c·max every KV tile instead of keeping it in a register
//         launch properties the launcher reads (CUDA blocks_per_sm, HIP waves_per_simd)
// attention_config_of<Cfg, D> reads a config with the defaults filled in and checks it.
#pragma once
#include <type_traits>

#include "tessel/core/atom_traits.hpp"

namespace tessel {

namespace contract_detail {
template <class Cfg, class = void> struct p_in_registers_of {
  static constexpr bool value = false;
};
template <class Cfg> struct p_in_registers_of<Cfg, std::void_t<decltype(Cfg::p_in_registers)>> {
  static constexpr bool value = Cfg::p_in_registers;
};
template <class Cfg, class = void> struct keep_scaled_max_of {
  static constexpr bool value = true;
};
template <class Cfg> struct keep_scaled_max_of<Cfg, std::void_t<decltype(Cfg::keep_scaled_max)>> {
  static constexpr bool value = Cfg::keep_scaled_max;
};
}  // namespace contract_detail

template <class Cfg, int D> struct attention_config_of {
  using atom = typename Cfg::atom;
  using smem_type = typename Cfg::smem_type;
  static constexpr int BQ = Cfg::BQ, BKV = Cfg::BKV, warps = Cfg::warps, stages = Cfg::stages;
  static constexpr bool p_in_registers = contract_detail::p_in_registers_of<Cfg>::value;
  static constexpr bool keep_scaled_max = contract_detail::keep_scaled_max_of<Cfg>::value;

  static_assert(valid_atom<atom>(), "attention_config: the atom's maps must cover A, B and C (atom_traits.hpp)");
  static_assert(stages >= 2, "attention_config: the K/V ring needs at least two stages");
  static_assert(warps >= 1 && BQ % warps == 0, "attention_config: warps must split the query rows evenly");
  static_assert(!p_in_registers || c_feeds_a<atom>(), "attention_config: p_in_registers needs an atom whose C is its A");
  static_assert(Cfg::layout_q::rows == BQ && Cfg::layout_q::cols == D && Cfg::layout_kt::rows == D &&
                    Cfg::layout_kt::cols == BKV && Cfg::layout_v::rows == BKV && Cfg::layout_v::cols == D &&
                    Cfg::layout_p::rows == BQ && Cfg::layout_p::cols == BKV,
                "attention_config: the shared layouts have the wrong shapes");
};

}  // namespace tessel
