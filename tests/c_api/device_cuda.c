/* tests/c_api/device_cuda.c — device.h on the CUDA runtime (built with the cuda backend). */
#include <string.h>

#include <cuda_runtime_api.h>

#include "device.h"

static int cuda_ok(cudaError_t e, const char* what) {
  check(e == cudaSuccess, "device: %s: %s", what, cudaGetErrorString(e));
  return e == cudaSuccess;
}

int device_available(void) {
  static int known = -1;
  if (known < 0) {
    int n = 0;
    known = strstr(tessel_backends(), "cuda") != NULL && cudaGetDeviceCount(&n) == cudaSuccess && n > 0;
    (void)cudaGetLastError(); /* no device: clear the error for later calls */
  }
  return known;
}

void* device_stream(void) {
  static cudaStream_t s = NULL;
  if (!s && !cuda_ok(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking), "cudaStreamCreateWithFlags")) return NULL;
  return (void*)s;
}

int device_put(view* v) {
  void* d = NULL;
  const size_t bytes = buffer_bytes(v->buf);
  if (!cuda_ok(cudaMalloc(&d, bytes), "cudaMalloc")) return 0;
  if (!cuda_ok(cudaMemcpy(d, v->buf->data, bytes, cudaMemcpyHostToDevice), "cudaMemcpy to the device")) return 0;
  v->t.data = d;
  v->t.device_kind = TESSEL_DEVICE_CUDA;
  v->t.device_index = 0;
  return 1;
}

int device_get(view* v) {
  const size_t bytes = buffer_bytes(v->buf);
  int ok = cuda_ok(cudaStreamSynchronize((cudaStream_t)device_stream()), "cudaStreamSynchronize");
  ok = ok && cuda_ok(cudaMemcpy(v->buf->data, v->t.data, bytes, cudaMemcpyDeviceToHost), "cudaMemcpy to the host");
  ok = cuda_ok(cudaFree(v->t.data), "cudaFree") && ok;
  v->t.data = v->buf->data;
  v->t.device_kind = TESSEL_DEVICE_HOST;
  return ok;
}
