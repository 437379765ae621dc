// tessel/cuda/tensor_map.hpp — tensor maps (TMA descriptors) for operands and outputs, built on the host.
//
// A copy engine reads (writes) a matrix through a tensor map: the matrix as a 3-D tensor
// (inner = its contiguous dimension, outer = the other, layers = batch entries),
// or a 4-D one whose layers come in groups (attention: heads of batch entries)
// and the box one copy moves: 128 bytes of inner elements (the 128-byte
// swizzle of swizzle128 tiles) × `box_outer` lines × 1 layer. The encoder is a
// driver function; tessel reaches it through the runtime's driver entry point
// at run time, so the build needs the toolkit's headers only, not libcuda.
// Preconditions (tma_compatible): base address and every stride 16-byte
// aligned, strides below 2^40 bytes. Include only from CUDA translation units.
#pragma once
#include <cstdint>
#include <string>
#include <type_traits>

#include <cuda.h>  // CUtensorMap and its enums only; the driver library is not linked
#include <cuda_runtime.h>

#include "tessel/core/global_tile.hpp"
#include "tessel/cuda/launch.hpp"

namespace tessel::cuda {

using tensor_map_encoder = CUresult (*)(CUtensorMap*, CUtensorMapDataType, cuuint32_t, void*, const cuuint64_t*,
                                        const cuuint64_t*, const cuuint32_t*, const cuuint32_t*, CUtensorMapInterleave,
                                        CUtensorMapSwizzle, CUtensorMapL2promotion, CUtensorMapFloatOOBfill);

inline tensor_map_encoder encode_tiled() {
  static const tensor_map_encoder fn = [] {
    void* p = nullptr;
    cudaDriverEntryPointQueryResult found = cudaDriverEntryPointSymbolNotFound;
    check(cudaGetDriverEntryPointByVersion("cuTensorMapEncodeTiled", &p, 12000, cudaEnableDefault, &found),
          "cudaGetDriverEntryPointByVersion(cuTensorMapEncodeTiled)", launch_shape{});
    if (found != cudaDriverEntryPointSuccess || p == nullptr)
      throw Error("tessel cuda backend: the driver has no cuTensorMapEncodeTiled (a CUDA 12 driver is needed for TMA)");
    return reinterpret_cast<tensor_map_encoder>(p);
  }();
  return fn;
}

// Whether a matrix (and its layer and group strides, in elements) can be read through a tensor map.
template <class T>
bool tma_compatible(const gmatrix<T>& m, std::int64_t layer_stride, std::int64_t group_stride = 0) {
  const std::int64_t lead = m.col_stride == 1 ? m.row_stride : m.col_stride;
  const auto bytes = [](std::int64_t e) { return e * std::int64_t(sizeof(T)); };
  const bool aligned = reinterpret_cast<std::uintptr_t>(m.ptr) % 16 == 0 && bytes(lead) % 16 == 0 &&
                       bytes(layer_stride) % 16 == 0 && bytes(group_stride) % 16 == 0;
  const std::int64_t limit = std::int64_t(1) << 40;
  return (m.col_stride == 1 || m.row_stride == 1) && aligned && bytes(lead) < limit && bytes(layer_stride) < limit &&
         bytes(group_stride) < limit && bytes(lead) > 0 && layer_stride >= 0 && group_stride >= 0 && m.rows > 0 &&
         m.cols > 0;
}

// The map of a matrix of bf16, fp16 or fp32 with `layers` entries
// `layer_stride` elements apart (0: one shared entry), boxes of
// 128 bytes (64 or 32 elements) × box_outer lines, 128-byte swizzle, zeros
// outside (reads) / clipped (writes). Grouped (a 4-D map): the layers come in
// `groups` of `layers`, groups `group_stride` elements apart (0: one shared group).
template <class T>
CUtensorMap make_tensor_map(const gmatrix<T>& m, std::int64_t layer_stride, int layers, int box_outer,
                            bool grouped = false, std::int64_t group_stride = 0, int groups = 1) {
  using E = std::remove_const_t<T>;
  static_assert(sizeof(E) == 2 || sizeof(E) == 4, "make_tensor_map: bf16, fp16 or fp32 elements");
  constexpr std::uint64_t size = sizeof(E);
  const bool rows_contiguous = m.col_stride == 1;  // the inner dimension runs along a row
  const std::uint64_t inner = rows_contiguous ? m.cols : m.rows, outer = rows_contiguous ? m.rows : m.cols;
  const std::int64_t lead = rows_contiguous ? m.row_stride : m.col_stride;
  const std::uint64_t n_layers = layer_stride == 0 ? 1 : std::uint64_t(layers);
  const std::uint64_t n_groups = group_stride == 0 ? 1 : std::uint64_t(groups);
  const cuuint64_t dims[4] = {inner, outer, n_layers, n_groups};
  // The stride of a single layer (group) is never used; any legal value will do.
  const std::uint64_t layer_bytes =
      layer_stride == 0 ? std::uint64_t(lead) * size * outer : std::uint64_t(layer_stride) * size;
  const std::uint64_t group_bytes = group_stride == 0 ? layer_bytes * n_layers : std::uint64_t(group_stride) * size;
  const cuuint64_t strides[3] = {std::uint64_t(lead) * size, (layer_bytes + 15) / 16 * 16, (group_bytes + 15) / 16 * 16};
  const cuuint32_t box[4] = {cuuint32_t(128 / size), cuuint32_t(box_outer), 1, 1};
  const cuuint32_t element_strides[4] = {1, 1, 1, 1};
  const CUtensorMapDataType type = std::is_same_v<E, bf16>   ? CU_TENSOR_MAP_DATA_TYPE_BFLOAT16
                                   : std::is_same_v<E, fp16> ? CU_TENSOR_MAP_DATA_TYPE_FLOAT16
                                                             : CU_TENSOR_MAP_DATA_TYPE_FLOAT32;
  CUtensorMap map{};
  const CUresult r = encode_tiled()(&map, type, grouped ? 4 : 3, const_cast<void*>(static_cast<const void*>(m.ptr)), dims, strides,
                                    box, element_strides, CU_TENSOR_MAP_INTERLEAVE_NONE, CU_TENSOR_MAP_SWIZZLE_128B,
                                    CU_TENSOR_MAP_L2_PROMOTION_L2_256B, CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
  if (r != CUDA_SUCCESS)
    throw Error("tessel cuda backend: cuTensorMapEncodeTiled failed (CUresult " + std::to_string(int(r)) + ") for a " +
                std::to_string(m.rows) + " x " + std::to_string(m.cols) + " operand, strides " +
                std::to_string(m.row_stride) + ", " + std::to_string(m.col_stride) + ", layer stride " +
                std::to_string(layer_stride));
  return map;
}

}  // namespace tessel::cuda
