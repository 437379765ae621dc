// tessel/core/register_tile.hpp — register tiles: a grid of atom fragments per lane.
//
// rt<Atom, Role, TR, TC> is a (TR·rows) × (TC·cols) tile of operand Role of the
// atom, where rows × cols is the atom's operand shape (A: M×K, B: K×N, C: M×N).
// Each lane holds frag[i][j][v] for every atom-sized sub-tile (i, j); the
// element it holds is
//   (lane, i, j, v) -> (i·rows + at(lane, v).row, j·cols + at(lane, v).col)
// with `at` the atom's operand map. On GPUs the fragments live in registers
// (all indices are compile-time constants after unrolling); on the CPU, whose
// "lane" is one SIMD thread, a large tile is an aligned array that the SIMD
// atom walks micro-tile by micro-tile.
#pragma once
#include "tessel/core/atom_traits.hpp"

namespace tessel {

template <class Atom, operand Role, int TR, int TC> struct rt {
  using atom = Atom;
  using geometry = operand_geometry<Atom, Role>;
  using value_type = typename geometry::type;
  static constexpr operand role = Role;
  static constexpr int tiles_r = TR, tiles_c = TC;
  static constexpr int values = geometry::values;
  static constexpr int rows = TR * geometry::rows, cols = TC * geometry::cols;
  alignas(64) value_type frag[TR][TC][values];

  // The tile coordinate of (lane, i, j, v).
  TESSEL_HOST_DEVICE static constexpr coord where(int lane, int i, int j, int v) {
    const coord x = geometry::at(lane, v);
    return {i * geometry::rows + x.row, j * geometry::cols + x.col};
  }
};

// Register tiles named by their logical shape; the shape must be a multiple of the atom's.
template <class Atom, int M, int K> struct rt_a_of {
  static_assert(M % Atom::M == 0 && K % Atom::K == 0, "rt_a: shape must be a multiple of the atom's M×K");
  using type = rt<Atom, operand::a, M / Atom::M, K / Atom::K>;
};
template <class Atom, int K, int N> struct rt_b_of {
  static_assert(K % Atom::K == 0 && N % Atom::N == 0, "rt_b: shape must be a multiple of the atom's K×N");
  using type = rt<Atom, operand::b, K / Atom::K, N / Atom::N>;
};
template <class Atom, int M, int N> struct rt_c_of {
  static_assert(M % Atom::M == 0 && N % Atom::N == 0, "rt_c: shape must be a multiple of the atom's M×N");
  using type = rt<Atom, operand::c, M / Atom::M, N / Atom::N>;
};
template <class Atom, int M, int K> using rt_a = typename rt_a_of<Atom, M, K>::type;
template <class Atom, int K, int N> using rt_b = typename rt_b_of<Atom, K, N>::type;
template <class Atom, int M, int N> using rt_c = typename rt_c_of<Atom, M, N>::type;

// Column vector (one value per tile row) and row vector (one per column) that
// go with a C tile: each lane keeps the entries of the rows (columns) its
// fragment touches, indexed like the fragment: cv[i][v] is row where(lane,i,0,v).row.
// row_reduce writes at least each row's first entry (first_in_row; the generic
// one writes all, the AMX policy's only those); broadcast_rows reads a row there
// only, so an op keeps just those up to date (for_each_row_first).
template <class Tile> struct col_vector {
  float value[Tile::tiles_r][Tile::values];
};
template <class Tile> struct row_vector {
  float value[Tile::tiles_c][Tile::values];
};

}  // namespace tessel
