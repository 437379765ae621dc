// support/device_buffer.hpp — memory on the built backend's device, for tests and tools.
//
// Not part of the public API. default_device() is cuda:0 / hip:0 in a GPU
// build and the host otherwise; device_available() is false when the build
// targets a GPU that this machine does not have (tests then skip, loudly).
// Every GPU call's status is checked; a failure throws std::runtime_error
// naming the call.
#pragma once
#include <cstddef>
#include <stdexcept>
#include <string>

#include "tessel/tensor.hpp"

namespace tessel::support {

device default_device();
bool device_available();
std::string device_description();  // e.g. "NVIDIA H100 80GB HBM3, driver 13000" or "host CPU"
void synchronize(const device& dev);
// A non-blocking stream of the device's own (cudaStream_t / hipStream_t, as
// stream::gpu takes), for work that must not run on the legacy default
// stream; host: throws. destroy_stream(dev, nullptr) does nothing.
void* create_stream(const device& dev);
void destroy_stream(const device& dev, void* s);

class device_buffer {
 public:
  device_buffer(const device& dev, std::size_t bytes);
  ~device_buffer();
  device_buffer(const device_buffer&) = delete;
  device_buffer& operator=(const device_buffer&) = delete;
  void* data() const { return ptr_; }
  std::size_t bytes() const { return bytes_; }
  const device& where() const { return dev_; }
  // Copies `bytes` at `offset`; 0 bytes is a no-op (null host pointers allowed),
  // a range past the buffer throws std::out_of_range.
  void upload(const void* host, std::size_t bytes, std::size_t offset = 0);
  void download(void* host, std::size_t bytes, std::size_t offset = 0) const;

 private:
  // False for an empty copy; throws std::out_of_range naming `what` for one past the end.
  bool copy_fits(std::size_t bytes, std::size_t offset, const char* what) const {
    if (offset > bytes_ || bytes > bytes_ - offset)
      throw std::out_of_range(std::string("device_buffer::") + what + ": " + std::to_string(bytes) + " bytes at offset " +
                              std::to_string(offset) + " exceed the buffer's " + std::to_string(bytes_));
    return bytes != 0;
  }
  device dev_;
  void* ptr_ = nullptr;
  std::size_t bytes_ = 0;
};

}  // namespace tessel::support
