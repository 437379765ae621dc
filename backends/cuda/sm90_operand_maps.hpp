// tessel/cuda/sm90_operand_maps.hpp — the host side of the sm90 TMA schedule: an op's tensor maps.
//
// What the schedule's supports(), stores_by_tma() and prepare() build on
// (schedule_sm90.hpp), host only:
//   operands_mappable<Op>(p)   every operand of p can be read through a tensor
//                              map, its contiguous dimension the tile's;
//   output_mappable<Op>(p)     output 0 of p can be stored through one, row by
//                              row (rows contiguous);
//   fill_operand_maps<Op, HalfOuter>(pp, p)  pp.maps[I] and operand I's layer
//                              facts (layers, layered, grouped) for every I;
//                              HalfOuter<I>::value: operand I is multicast by
//                              halves of its outer extent, so its boxes are
//                              half as tall.
#pragma once
#include <utility>

#include "tessel/core/pipeline.hpp"
#include "tessel/cuda/tensor_map.hpp"

namespace tessel::cuda {

template <class Op, int I> bool operand_mappable(const typename Op::problem& p) {
  const auto g = Op::template operand<I>(p);
  // The matrix's contiguous dimension must be the tile's (a view whose
  // strides are both 1 would otherwise be mapped the wrong way round).
  using L = typename Op::template operand_tile<I>::layout;
  const bool along = L::cols_contiguous_in_chunks ? g.matrix.col_stride == 1
                                                  : g.matrix.row_stride == 1 && g.matrix.col_stride != 1;
  return along && tma_compatible(g.matrix, g.layer_stride, g.group_stride);
}
template <class Op, int... I>
bool operands_mappable(const typename Op::problem& p, std::integer_sequence<int, I...>) {
  return (... && operand_mappable<Op, I>(p));
}
template <class Op> bool operands_mappable(const typename Op::problem& p) {
  return operands_mappable<Op>(p, std::make_integer_sequence<int, Op::operand_count>{});
}

template <class Op> bool output_mappable(const typename Op::problem& p) {
  const auto out = Op::template output<0>(p);
  return out.matrix.col_stride == 1 && tma_compatible(out.matrix, out.layer_stride);
}

template <class Op, bool HalfOuter, int I, class Params>
void fill_operand_map(Params& pp, const typename Op::problem& p) {
  using L = typename Op::template operand_tile<I>::layout;
  const auto g = Op::template operand<I>(p);
  pp.maps[I] = make_tensor_map(g.matrix, g.layer_stride, g.layers, HalfOuter ? L::outer / 2 : L::outer,
                               grouped_layers_of<Op>::value, g.group_stride, g.groups);
  pp.layers[I] = g.layers;
  pp.layered[I] = g.layer_stride != 0;
  pp.grouped[I] = g.group_stride != 0;
}
template <class Op, template <int> class HalfOuter, class Params, int... I>
void fill_operand_maps(Params& pp, const typename Op::problem& p, std::integer_sequence<int, I...>) {
  (fill_operand_map<Op, HalfOuter<I>::value, I>(pp, p), ...);
}
template <class Op, template <int> class HalfOuter, class Params>
void fill_operand_maps(Params& pp, const typename Op::problem& p) {
  fill_operand_maps<Op, HalfOuter>(pp, p, std::make_integer_sequence<int, Op::operand_count>{});
}

}  // namespace tessel::cuda
