/* bench/capi/tessel_capi.h — a C entry point to tessel, for scripts (ctypes).
 *
 * Each call returns 0 on success; on any error it returns 1 and
 * tessel_capi_last_error() (per thread) gives the message, which names the
 * function and the argument. Pointers are raw device (or host) pointers;
 * strides are in elements; dtype: 0 fp32, 1 fp16, 2 bf16; device: 0 host,
 * 1 cuda, 2 hip. Arrays are [batch, seq, heads, dim]. Refused before anything
 * is read: a dtype or device value outside those lists, a null shape or
 * stride array (each must hold 4 int64), a negative size, sizes whose product
 * overflows int64. `lse` may be null (not computed); data pointers may be null
 * only for empty arrays (tessel's own check). On the host (device 0) `stream`
 * is ignored and all cores are used.
 */
#ifndef TESSEL_CAPI_H
#define TESSEL_CAPI_H
#include <stdint.h>
#ifdef __cplusplus
extern "C" {
#endif

const char* tessel_capi_last_error(void);
const char* tessel_capi_backends(void);

int tessel_capi_attention(int dtype, int device, void* q, const int64_t* q_shape, const int64_t* q_strides, void* k,
                          const int64_t* k_shape, const int64_t* k_strides, void* v, const int64_t* v_strides,
                          void* out, const int64_t* out_strides, float* lse, int causal, float scale, void* stream);

int tessel_capi_gemm(int dtype_in, int dtype_out, int device, void* a, void* b, void* c, int64_t m, int64_t n,
                     int64_t k, int trans_a, int trans_b, float alpha, float beta, void* stream);

#ifdef __cplusplus
}
#endif
#endif
