// tessel/core/gemm_contract.hpp — what a backend's GEMM configuration must and may provide.
//
// P::gemm_config<TIn, TOut> (a backend's gemm_config.hpp / policy; TOut, C's
// element type, defaults to TIn and may be ignored) is a struct with
//   must: using atom;                   the matrix atom (valid_atom holds)
//         using smem_type;              element type of the shared tiles
//         static constexpr int BM, BN, BK;            block tile (C: BM × BN; K step BK)
//         static constexpr int warps_m, warps_n;      consumer units per block, as a grid
//         static constexpr int stages;                shared stages in the ring
//         template <bool KContiguous> using layout_a; shared layout of the BM × BK A tile
//         template <bool NContiguous> using layout_b; shared layout of the BK × BN B tile
//   may:  using unit;        the scope of one consumer unit (default warp_scope):
//                            group_scope<4> for a warpgroup atom such as wgmma
//         using schedule;    the pipeline schedule (default ring_schedule<P, stages>)
//         static constexpr int raster_group;           block-rows per strip of the tile order (default 8)
//         static constexpr int raster_cols;            block columns per run of a strip, its tiles
//                                                      row by row (default 1: the strip column by
//                                                      column; ops/gemm/kernel.hpp, raster_at)
//         static constexpr int blocks_per_sm;          (CUDA) blocks the compiler budgets for
// gemm_config_of<P, Cfg> reads a config with the defaults filled in and checks it.
#pragma once
#include <type_traits>

#include "tessel/core/atom_traits.hpp"
#include "tessel/core/pipeline.hpp"

namespace tessel {

namespace contract_detail {
template <class Cfg, class = void> struct unit_of {
  using type = warp_scope;
};
template <class Cfg> struct unit_of<Cfg, std::void_t<typename Cfg::unit>> {
  using type = typename Cfg::unit;
};
template <class Cfg, class = void> struct raster_group_of {
  static constexpr int value = 8;
};
template <class Cfg> struct raster_group_of<Cfg, std::void_t<decltype(Cfg::raster_group)>> {
  static constexpr int value = Cfg::raster_group;
};
template <class Cfg, class = void> struct raster_cols_of {
  static constexpr int value = 1;
};
template <class Cfg> struct raster_cols_of<Cfg, std::void_t<decltype(Cfg::raster_cols)>> {
  static constexpr int value = Cfg::raster_cols;
};
template <class P, class Cfg, class = void> struct schedule_of {
  using type = ring_schedule<P, Cfg::stages>;
};
template <class P, class Cfg> struct schedule_of<P, Cfg, std::void_t<typename Cfg::schedule>> {
  using type = typename Cfg::schedule;
};
}  // namespace contract_detail

template <class P, class Cfg> struct gemm_config_of {
  using atom = typename Cfg::atom;
  using smem_type = typename Cfg::smem_type;
  using unit = typename contract_detail::unit_of<Cfg>::type;
  using schedule = typename contract_detail::schedule_of<P, Cfg>::type;
  static constexpr int BM = Cfg::BM, BN = Cfg::BN, BK = Cfg::BK, stages = Cfg::stages;
  static constexpr int units_m = Cfg::warps_m, units_n = Cfg::warps_n;
  static constexpr int WM = BM / units_m, WN = BN / units_n;  // one unit's C tile
  static constexpr int raster_group = contract_detail::raster_group_of<Cfg>::value;
  static constexpr int raster_cols = contract_detail::raster_cols_of<Cfg>::value;

  static_assert(valid_atom<atom>(), "gemm_config: the atom's maps must cover A, B and C (atom_traits.hpp)");
  static_assert(BM > 0 && BN > 0 && BK > 0 && stages >= 1 && raster_group >= 1 && raster_cols >= 1,
                "gemm_config: BM, BN, BK, stages, raster_group and raster_cols must be positive");
  static_assert(BM % units_m == 0 && BN % units_n == 0, "gemm_config: the units must split the block tile evenly");
  static_assert(WM % atom::M == 0 && WN % atom::N == 0 && BK % atom::K == 0,
                "gemm_config: a unit's tile and BK must be multiples of the atom's M, N and K");
  static_assert(atom::lanes <= unit::warps * P::lanes,
                "gemm_config: the atom needs more lanes than one consumer unit has");
};

}  // namespace tessel
