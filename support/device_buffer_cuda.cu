// support/device_buffer_cuda — device_buffer on the cuda device (host memory for host views).
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <new>
#include <stdexcept>
#include <string>

#include <cuda_runtime.h>

#include "device_buffer.hpp"

namespace tessel::support {
namespace {
void check(cudaError_t e, const char* what) {
  if (e != cudaSuccess) throw std::runtime_error(std::string(what) + " failed: " + cudaGetErrorString(e));
}
}  // namespace

device default_device() { return device::cuda(0); }

bool device_available() {
  int n = 0;
  return cudaGetDeviceCount(&n) == cudaSuccess && n > 0;
}

std::string device_description() {
  if (!device_available()) return "no cuda device";
  cudaDeviceProp prop;
  check(cudaGetDeviceProperties(&prop, 0), "cudaGetDeviceProperties");
  int driver = 0;
  check(cudaDriverGetVersion(&driver), "cudaDriverGetVersion");
  return std::string(prop.name) + ", driver API " + std::to_string(driver);
}

void synchronize(const device& dev) {
  if (dev.kind != device_kind::host) check(cudaDeviceSynchronize(), "cudaDeviceSynchronize");
}

void* create_stream(const device& dev) {
  if (dev.kind == device_kind::host) throw std::runtime_error("create_stream: the host has no streams");
  cudaStream_t s = nullptr;
  check(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking), "cudaStreamCreateWithFlags");
  return s;
}
void destroy_stream(const device&, void* s) {
  if (s) check(cudaStreamDestroy(static_cast<cudaStream_t>(s)), "cudaStreamDestroy");
}

device_buffer::device_buffer(const device& dev, std::size_t bytes) : dev_(dev), bytes_(bytes) {
  if (dev.kind == device_kind::host) {
    if (bytes > SIZE_MAX - 128) throw std::bad_alloc();  // the rounding below would wrap
    ptr_ = std::aligned_alloc(64, (bytes + 63) / 64 * 64 + 64);
    if (!ptr_) throw std::bad_alloc();
  } else {
    check(cudaMalloc(&ptr_, bytes ? bytes : 1), "cudaMalloc");
  }
}
device_buffer::~device_buffer() {
  if (dev_.kind == device_kind::host) std::free(ptr_);
  else (void)cudaFree(ptr_);
}
// Empty copies return first: an empty host vector's data() may be null (memcpy
// with a null pointer is undefined even for 0 bytes).
void device_buffer::upload(const void* host, std::size_t bytes, std::size_t offset) {
  if (!copy_fits(bytes, offset, "upload")) return;
  if (dev_.kind == device_kind::host) std::memcpy(static_cast<char*>(ptr_) + offset, host, bytes);
  else check(cudaMemcpy(static_cast<char*>(ptr_) + offset, host, bytes, cudaMemcpyHostToDevice), "cudaMemcpy H2D");
}
void device_buffer::download(void* host, std::size_t bytes, std::size_t offset) const {
  if (!copy_fits(bytes, offset, "download")) return;
  if (dev_.kind == device_kind::host) std::memcpy(host, static_cast<const char*>(ptr_) + offset, bytes);
  else check(cudaMemcpy(host, static_cast<const char*>(ptr_) + offset, bytes, cudaMemcpyDeviceToHost), "cudaMemcpy D2H");
}

}  // namespace tessel::support
