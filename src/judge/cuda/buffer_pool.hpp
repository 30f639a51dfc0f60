// Device buffers kept for reuse. Every CUDA run copies its outputs into the oracle's memory
// (RunOutcome::device_outputs), and an allocation and a free per copy are calls into the
// driver, which are slow while another process starts or ends a CUDA context (serve's spare
// worker beside a check): on the H200 the frees alone cost a softmax check in serve about 40 ms
// of its 300. A pool hands out a kept buffer of about the size asked for, and takes it back
// when its PooledBuffer ends.
#pragma once

#include <cstddef>
#include <memory>
#include <mutex>
#include <vector>

#include "kjudge/cuda.hpp"

namespace kj::judge {

class BufferPool;

// A pool's buffer: returned to the pool (not freed) when it ends. Work on the oracle's stream
// that uses it must be queued before it ends; the next user's work follows on the same stream.
class PooledBuffer {
public:
  PooledBuffer() = default;
  PooledBuffer(DeviceBuffer buffer, std::shared_ptr<BufferPool> pool)
      : buffer_(std::move(buffer)), pool_(std::move(pool)) {}
  ~PooledBuffer();
  PooledBuffer(PooledBuffer&&) noexcept = default;
  PooledBuffer& operator=(PooledBuffer&& other) noexcept;
  CUdeviceptr ptr() const { return buffer_.ptr(); }
  std::size_t bytes() const { return buffer_.bytes(); }

private:
  DeviceBuffer buffer_;
  std::shared_ptr<BufferPool> pool_;
};

class BufferPool : public std::enable_shared_from_this<BufferPool> {
public:
  // Buffers beyond `kept_bytes` in all are freed when given back.
  static std::shared_ptr<BufferPool> make(std::size_t kept_bytes);
  // A kept buffer of at least `bytes` (and at most twice as many), else a new one.
  PooledBuffer take(std::size_t bytes);
  std::size_t kept_bytes() const;

private:
  explicit BufferPool(std::size_t limit) : limit_(limit) {}
  friend class PooledBuffer;
  void give_back(DeviceBuffer buffer);

  const std::size_t limit_;
  mutable std::mutex mutex_;
  std::vector<DeviceBuffer> kept_;
  std::size_t kept_bytes_ = 0;
};

} // namespace kj::judge
