/* tessel/c_api.h — tessel's C ABI (libtessel_c), for C and for foreign-function
 * callers (ctypes, Rust, Julia, ...). docs/c_api.md has the overview.
 *
 * Contract, for every function below:
 * - Status: an op returns TESSEL_OK (0) or one of the TESSEL_ERROR_* codes;
 *   tessel_last_error() then gives, on the calling thread, a message naming
 *   the function and the argument at fault and what was expected. A message
 *   from the C++ library (tessel::Error) is passed through unchanged
 *   ("tessel::gemm: argument 'b': ..."); one from this layer starts with the
 *   C function's name ("tessel_gemm: argument 'trans_a': ..."). No C++
 *   exception ever leaves the library.
 * - Refusals happen before anything is written: on an error the outputs are
 *   untouched, on the host and on a device alike.
 * - Tensors: a tessel_tensor describes memory the caller owns (pointer, dtype,
 *   rank, shape, strides in elements, device). This layer reads `rank` values
 *   of `shape` and `strides` and nothing else before tessel's own checks.
 * - Host ops run before the call returns, on `threads` threads (0: the
 *   library's default, all cores); `stream` is ignored. Device ops (pointers of
 *   a CUDA or HIP device, device_kind TESSEL_DEVICE_CUDA / _HIP) are enqueued
 *   on `stream` (a cudaStream_t / hipStream_t; NULL: the default stream) and
 *   the call returns without waiting; `threads` is ignored.
 * - Versioning: TESSEL_C_API_VERSION is the version this header describes;
 *   tessel_c_api_version() is the loaded library's. They are compatible when
 *   TESSEL_C_API_VERSION_COMPATIBLE(tessel_c_api_version()) holds: same major
 *   version, library minor (and patch) at least the header's. A minor version
 *   only adds; anything else changes the major version and the SONAME
 *   (libtessel_c.so.<major>).
 */
#ifndef TESSEL_C_API_H
#define TESSEL_C_API_H

#include <stdint.h>

#define TESSEL_C_API_VERSION_MAJOR 1
#define TESSEL_C_API_VERSION_MINOR 0
#define TESSEL_C_API_VERSION_PATCH 0
#define TESSEL_C_API_VERSION \
  (TESSEL_C_API_VERSION_MAJOR * 10000 + TESSEL_C_API_VERSION_MINOR * 100 + TESSEL_C_API_VERSION_PATCH)
/* Whether a library reporting version v serves a caller built with this header. */
#define TESSEL_C_API_VERSION_COMPATIBLE(v) ((v) / 10000 == TESSEL_C_API_VERSION_MAJOR && (v) >= TESSEL_C_API_VERSION)

#ifdef __cplusplus
extern "C" {
#endif

/* Status codes (the return value of every op). */
typedef int32_t tessel_status;
enum {
  TESSEL_OK = 0,
  TESSEL_ERROR_INVALID_ARGUMENT = 1, /* breaks the op's contract: shape, stride, value, null pointer, overlap */
  TESSEL_ERROR_UNSUPPORTED = 2,      /* well-formed, but not provided: dtype pair, head_dim, backend not built */
  TESSEL_ERROR_DEVICE = 3,           /* the device runtime or driver failed (launch, memory query) */
  TESSEL_ERROR_OUT_OF_MEMORY = 4,    /* host memory for the op's workspace could not be allocated */
  TESSEL_ERROR_INTERNAL = 5          /* anything else: a bug in tessel; the message says what was caught */
};

/* Element types (tessel_tensor.dtype). */
enum {
  TESSEL_DTYPE_F32 = 0, /* IEEE binary32 */
  TESSEL_DTYPE_F16 = 1, /* IEEE binary16 */
  TESSEL_DTYPE_BF16 = 2 /* bfloat16: the upper 16 bits of a binary32 */
};

/* Where a tensor's memory lives (tessel_tensor.device_kind). */
enum {
  TESSEL_DEVICE_HOST = 0, /* device_index must be 0 */
  TESSEL_DEVICE_CUDA = 1, /* device_index: the CUDA device ordinal */
  TESSEL_DEVICE_HIP = 2   /* device_index: the HIP device ordinal */
};

/* Which kernels an op runs (the `path` argument). FASTEST: the best the device
 * and operands allow. PORTABLE: the backend's baseline kernels (on CUDA the
 * sm_80 ones even on an sm_90 device), to cross-check a fast path. */
enum { TESSEL_PATH_FASTEST = 0, TESSEL_PATH_PORTABLE = 1 };

/* The largest rank an op takes. */
#define TESSEL_MAX_RANK 4

/* A non-owning strided view. Element (i0, ..., i{rank-1}) is at
 * data + sum(i_d * strides[d]) elements. `shape` holds `rank` extents (>= 0);
 * `strides` holds `rank` strides (>= 0, in elements), or is NULL for the
 * packed row-major layout (last dimension contiguous). `data` may be NULL only
 * when the view has no elements. */
typedef struct tessel_tensor {
  void* data;
  const int64_t* shape;
  const int64_t* strides;
  int32_t dtype;        /* TESSEL_DTYPE_* */
  int32_t rank;         /* 0 .. TESSEL_MAX_RANK; each op says which it takes */
  int32_t device_kind;  /* TESSEL_DEVICE_* */
  int32_t device_index; /* >= 0; 0 for the host */
} tessel_tensor;

/* The C ABI version of the loaded library (major * 10000 + minor * 100 + patch). */
int32_t tessel_c_api_version(void);

/* The backends compiled into the library, e.g. "cpu" or "cpu cuda". Static storage. */
const char* tessel_backends(void);

/* The message of the calling thread's last op: "" when it returned TESSEL_OK.
 * Valid until that thread's next call into tessel. Never NULL. */
const char* tessel_last_error(void);

/* "TESSEL_OK", "TESSEL_ERROR_INVALID_ARGUMENT", ...; "unknown status" otherwise. Static storage. */
const char* tessel_status_name(tessel_status status);

/* GEMM:  C = alpha * op(A) * op(B) + beta * C,   op(X) = X, or X^T when trans_x is 1.
 *
 * a, b: rank 2 ([rows, cols]) or 3 ([batch, rows, cols]); op(A) is [M, K] and
 * op(B) is [K, N]. c: [M, N], or [batch, M, N] when a or b is batched; an
 * operand with batch extent 1 (or batch stride 0) is shared by every entry.
 * Each matrix row- or column-major: one of its last two strides equal to 1.
 * dtypes: a and b F32, F16 or BF16 (the same); c that type or F32 (this
 * chooses the output type). Accumulation is fp32. beta = 0 never reads c.
 * c must not overlap itself, a or b. All three on one device.
 * trans_a, trans_b: 0 or 1. path: TESSEL_PATH_*. threads >= 0.
 * Returns TESSEL_OK, or the status of the first problem found. */
tessel_status tessel_gemm(const tessel_tensor* a, const tessel_tensor* b, const tessel_tensor* c, float alpha,
                          float beta, int32_t trans_a, int32_t trans_b, int32_t path, int32_t threads, void* stream);

/* Attention forward (FlashAttention algorithm, no seq^2 matrix in memory):
 *   out[b, i, h, :] = softmax_j(scale * q[b, i, h, :] . k[b, j, h', :] + mask) v[b, j, h', :]
 *
 * q, out: [batch, q_len, heads, head_dim]; k, v: [batch, kv_len, kv_heads,
 * head_dim], rank 4, any strides with head_dim contiguous (stride 1): a
 * [batch, heads, seq, head_dim] buffer is passed with its shape and strides
 * permuted to this order. kv_heads divides heads (grouped-query attention:
 * query head h reads kv head h / (heads / kv_heads)). head_dim 64 or 128.
 * dtypes: one for all four; BF16 or F16 (and F32 on the host).
 * causal: 0 or 1; 1 masks at the bottom right (query i sees keys
 * j <= i + kv_len - q_len). scale > 0, or 0 for 1/sqrt(head_dim).
 * lse: NULL, or an F32 [batch, heads, q_len] tensor that receives the
 * natural-log log-sum-exp of each row's scaled scores. A row that sees no key
 * is written as zeros with lse -inf. out and lse must not overlap themselves,
 * each other, q, k or v. All on one device. path: TESSEL_PATH_*. threads >= 0.
 * Returns TESSEL_OK, or the status of the first problem found. */
tessel_status tessel_attention(const tessel_tensor* q, const tessel_tensor* k, const tessel_tensor* v,
                               const tessel_tensor* out, const tessel_tensor* lse, int32_t causal, float scale,
                               int32_t path, int32_t threads, void* stream);

#ifdef __cplusplus
}
#endif
#endif /* TESSEL_C_API_H */
