// support/device_buffer_cpu.cpp — device_buffer for a CPU-only build: host memory.
#include <cstdlib>
#include <cstring>
#include <new>

#include "device_buffer.hpp"

namespace tessel::support {

device default_device() { return device::host(); }
bool device_available() { return true; }
std::string device_description() { return "host CPU"; }
void synchronize(const device&) {}

device_buffer::device_buffer(const device& dev, std::size_t bytes) : dev_(dev), bytes_(bytes) {
  ptr_ = std::aligned_alloc(64, (bytes + 63) / 64 * 64 + 64);
  if (!ptr_) throw std::bad_alloc();
}
device_buffer::~device_buffer() { std::free(ptr_); }
void device_buffer::upload(const void* host, std::size_t bytes, std::size_t offset) {
  std::memcpy(static_cast<char*>(ptr_) + offset, host, bytes);
}
void device_buffer::download(void* host, std::size_t bytes, std::size_t offset) const {
  std::memcpy(host, static_cast<const char*>(ptr_) + offset, bytes);
}

}  // namespace tessel::support
