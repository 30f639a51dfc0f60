// BufferPool and PooledBuffer (buffer_pool.hpp).
#include "judge/cuda/buffer_pool.hpp"

#include <algorithm>

namespace kj::judge {

PooledBuffer::~PooledBuffer() {
  if (pool_ && buffer_.ptr() != 0) pool_->give_back(std::move(buffer_));
}

PooledBuffer& PooledBuffer::operator=(PooledBuffer&& other) noexcept {
  if (this != &other) {
    if (pool_ && buffer_.ptr() != 0) pool_->give_back(std::move(buffer_));
    buffer_ = std::move(other.buffer_);
    pool_ = std::move(other.pool_);
  }
  return *this;
}

std::shared_ptr<BufferPool> BufferPool::make(std::size_t kept_bytes) {
  return std::shared_ptr<BufferPool>(new BufferPool(kept_bytes));
}

PooledBuffer BufferPool::take(std::size_t bytes) {
  bytes = std::max<std::size_t>(bytes, 1);
  {
    const std::lock_guard<std::mutex> lock(mutex_);
    auto best = kept_.end();
    for (auto it = kept_.begin(); it != kept_.end(); ++it)
      if (it->bytes() >= bytes && it->bytes() / 2 <= bytes &&
          (best == kept_.end() || it->bytes() < best->bytes()))
        best = it;
    if (best != kept_.end()) {
      DeviceBuffer b = std::move(*best);
      kept_.erase(best);
      kept_bytes_ -= b.bytes();
      return PooledBuffer(std::move(b), shared_from_this());
    }
  }
  return PooledBuffer(DeviceBuffer(bytes), shared_from_this());
}

std::size_t BufferPool::kept_bytes() const {
  const std::lock_guard<std::mutex> lock(mutex_);
  return kept_bytes_;
}

void BufferPool::give_back(DeviceBuffer buffer) {
  const std::lock_guard<std::mutex> lock(mutex_);
  if (kept_bytes_ + buffer.bytes() > limit_) return; // freed here, outside the budget
  kept_bytes_ += buffer.bytes();
  kept_.push_back(std::move(buffer));
}

} // namespace kj::judge
