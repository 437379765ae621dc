// tessel/core/attention_contract.hpp — what a backend's attention configuration must and may provide.
//
// P::attention_config<T, D> (a backend's attention_config.hpp) is a struct with
//   must: using atom;  using smem_type;
//         static constexpr int BQ, BKV;     query rows per block, keys per K/V tile
//         static constexpr int warps;       consumer warps per block, in units of unit::warps;
//                                           each unit owns BQ / units query rows
//         static constexpr int stages;      K/V tiles in the ring (>= 2)
//         using layout_q;   BQ × D   (A operand)
//         using layout_kt;  D × BKV  (B operand, read from K's rows)
//         using layout_v;   BKV × D  (B operand)
//         using layout_p;   BQ × BKV (A operand; unused where P stays in registers)
//   may:  using unit;       the scope of one consumer unit (default warp_scope):
//                           group_scope<4> for a warpgroup atom such as wgmma
//         using schedule;   the pipeline schedule (default: the portable ring,
//                           ring_schedule<P, stages>; ops/attention/kernel.hpp)
//         static constexpr bool p_in_registers;   (default false) the atom's C
//                 fragment is its A fragment (c_feeds_a): P feeds P·V from registers
//         static constexpr bool keep_scaled_max;  (default true) false: recompute each
//                 row's c·max every KV tile instead of keeping it in a register
//         static constexpr bool take_turns;  (default false) the block's consumer
//                 units take turns issuing their MMAs, in a ring (FlashAttention-3's
//                 ping-pong: one unit's softmax runs while the others' GEMMs do); needs
//                 two or more units and the policy's turn_wait / turn_pass for that
//                 many (core/tile_ops.hpp)
//         using non_causal; (default: the config itself) the configuration for calls
//                 without a causal mask, itself checked as a config: where a schedule
//                 suits equal-cost units but not the causal triangle's (a persistent
//                 grid's fixed stride); the dispatch (ops/attention/dispatch.hpp)
//                 picks it per call, so both run the same op
//         static constexpr long long heaviest_first_bytes;  (default 0) > 0: the work
//                 units are ordered heaviest first (a causal mask's late query tiles)
//                 over groups of heads whose K and V fit in that many bytes (of the
//                 device's L2), and a persistent schedule deals them in alternating
//                 rounds (core/pipeline.hpp uneven_units); 0: head by head, each head's
//                 query tiles last to first (ops/attention/kernel.hpp work_at);
//                 heaviest_first_all_heads: one group of every head
//         launch properties the launcher reads (CUDA blocks_per_sm, HIP waves_per_simd)
// attention_config_of<Cfg, D> reads a config with the defaults filled in and checks it;
// non_causal_config_of<Cfg> is the config a call without a causal mask runs.
#pragma once
#include <type_traits>

#include "tessel/core/atom_traits.hpp"
#include "tessel/core/scope.hpp"

namespace tessel {

// A heaviest_first_bytes that holds every head's K and V: the units in one group.
inline constexpr long long heaviest_first_all_heads = 1LL << 60;

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
template <class Cfg, class = void> struct take_turns_of {
  static constexpr bool value = false;
};
template <class Cfg> struct take_turns_of<Cfg, std::void_t<decltype(Cfg::take_turns)>> {
  static constexpr bool value = Cfg::take_turns;
};
template <class Cfg, class = void> struct heaviest_first_bytes_of {
  static constexpr long long value = 0;
};
template <class Cfg> struct heaviest_first_bytes_of<Cfg, std::void_t<decltype(Cfg::heaviest_first_bytes)>> {
  static constexpr long long value = Cfg::heaviest_first_bytes;
};
template <class Cfg, class = void> struct non_causal_of {
  using type = Cfg;
};
template <class Cfg> struct non_causal_of<Cfg, std::void_t<typename Cfg::non_causal>> {
  using type = typename Cfg::non_causal;
};
template <class Cfg, class = void> struct attention_unit_of {
  using type = warp_scope;
};
template <class Cfg> struct attention_unit_of<Cfg, std::void_t<typename Cfg::unit>> {
  using type = typename Cfg::unit;
};
}  // namespace contract_detail

template <class Cfg> using non_causal_config_of = typename contract_detail::non_causal_of<Cfg>::type;

template <class Cfg, int D> struct attention_config_of {
  using atom = typename Cfg::atom;
  using smem_type = typename Cfg::smem_type;
  using unit = typename contract_detail::attention_unit_of<Cfg>::type;
  static constexpr int BQ = Cfg::BQ, BKV = Cfg::BKV, warps = Cfg::warps, stages = Cfg::stages;
  static constexpr int units = warps / unit::warps;  // consumer units, each owning BQ / units query rows
  static constexpr bool p_in_registers = contract_detail::p_in_registers_of<Cfg>::value;
  static constexpr bool keep_scaled_max = contract_detail::keep_scaled_max_of<Cfg>::value;
  static constexpr bool take_turns = contract_detail::take_turns_of<Cfg>::value;
  static constexpr long long heaviest_first_bytes = contract_detail::heaviest_first_bytes_of<Cfg>::value;

  static_assert(valid_atom<atom>(), "attention_config: the atom's maps must cover A, B and C (atom_traits.hpp)");
  static_assert(stages >= 2, "attention_config: the K/V ring needs at least two stages");
  static_assert(warps >= 1 && warps % unit::warps == 0 && BQ % units == 0,
                "attention_config: whole units of warps must split the query rows evenly");
  static_assert((BQ / units) % atom::M == 0 && BKV % atom::N == 0 && D % atom::N == 0,
                "attention_config: a unit's rows, BKV and D must be multiples of the atom's M and N");
  static_assert(!p_in_registers || c_feeds_a<atom>(), "attention_config: p_in_registers needs an atom whose C is its A");
  static_assert(!take_turns || units >= 2, "attention_config: take_turns needs two or more consumer units");
  static_assert(heaviest_first_bytes >= 0, "attention_config: heaviest_first_bytes is a byte count (0: off)");
  static_assert(Cfg::layout_q::rows == BQ && Cfg::layout_q::cols == D && Cfg::layout_kt::rows == D &&
                    Cfg::layout_kt::cols == BKV && Cfg::layout_v::rows == BKV && Cfg::layout_v::cols == D &&
                    Cfg::layout_p::rows == BQ && Cfg::layout_p::cols == BKV,
                "attention_config: the shared layouts have the wrong shapes");
};

}  // namespace tessel
