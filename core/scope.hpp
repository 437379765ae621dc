// tessel/core/scope.hpp — the levels at which tile code runs: warp, group, block, grid.
//
// A warp is a lane group executing in lock step: 32 lanes on NVIDIA, 64 on
// CDNA, one SIMD thread on the CPU (P::lanes). A group<N> is N consecutive
// warps (Hopper's warpgroup is group<4>); a block is all warps sharing one
// shared-memory arena; the grid is all blocks of a launch.
//
// Every kernel body receives a backend context `ctx` (P::context) that knows
// its place: ctx.block_x(), block_y(), block_z(), ctx.warp() (warp index in the
// block), ctx.lane(), ctx.thread() (= warp·lanes + lane), ctx.sync() (block
// barrier), ctx.shfl_xor(v, mask) (exchange with lane ^ mask in the warp), and
// ctx.smem() (the block's shared-memory arena). Scopes are types so that an op
// meant for a group cannot be called on a single warp by mistake.
#pragma once
#include "tessel/core/config.hpp"

namespace tessel {

struct warp_scope {
  static constexpr int warps = 1;
};
template <int N> struct group_scope {
  static_assert(N >= 1, "a group has at least one warp");
  static constexpr int warps = N;
};
struct block_scope {};
struct grid_scope {};

// Launch geometry of a kernel: a 3-D grid of blocks, `warps` warps per block,
// and `smem_bytes` of shared memory per block.
// persistent: grid_x counts work units, and the launcher may start fewer
// blocks (as many as fit at once), each striding over the units by grid_x().
// cluster_x: blocks launched together as one cluster along x, able to use each
// other's shared memory (CUDA sm_90); grid_x is a multiple of it, and a
// persistent launch keeps whole clusters. Backends without clusters refuse > 1.
struct launch_shape {
  int grid_x = 1, grid_y = 1, grid_z = 1;
  int warps = 1;
  int smem_bytes = 0;
  bool persistent = false;
  int cluster_x = 1;
};

}  // namespace tessel
