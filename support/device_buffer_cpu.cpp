// support/device_buffer_cpu.cpp — device_buffer for a CPU-only build: host memory.
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <new>
#include <stdexcept>
#include <string>

#include "device_buffer.hpp"

namespace tessel::support {

device default_device() { return device::host(); }
bool device_available() { return true; }
std::string device_description() { return "host CPU"; }
void synchronize(const device&) {}
void* create_stream(const device&) { throw std::runtime_error("create_stream: the host has no streams"); }
void destroy_stream(const device&, void*) {}

device_buffer::device_buffer(const device& dev, std::size_t bytes) : dev_(dev), bytes_(bytes) {
  if (bytes > SIZE_MAX - 128) throw std::bad_alloc();  // the rounding below would wrap
  ptr_ = std::aligned_alloc(64, (bytes + 63) / 64 * 64 + 64);
  if (!ptr_) throw std::bad_alloc();
}
device_buffer::~device_buffer() { std::free(ptr_); }
// Empty copies return before memcpy: an empty host vector's data() may be null,
// and memcpy with a null pointer is undefined even for 0 bytes.
void device_buffer::upload(const void* host, std::size_t bytes, std::size_t offset) {
  if (!copy_fits(bytes, offset, "upload")) return;
  std::memcpy(static_cast<char*>(ptr_) + offset, host, bytes);
}
void device_buffer::download(void* host, std::size_t bytes, std::size_t offset) const {
  if (!copy_fits(bytes, offset, "download")) return;
  std::memcpy(host, static_cast<const char*>(ptr_) + offset, bytes);
}

}  // namespace tessel::support
