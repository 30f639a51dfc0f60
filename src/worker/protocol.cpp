// Framing of the oracle/worker protocol (protocol.hpp). The decoder keeps whatever arrived past
// a message for the next one, so a peer that writes two messages in one send is read correctly;
// poll() bounds every wait so a silent worker cannot hang the oracle.
#include "worker/protocol.hpp"

#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <stdexcept>

#include <fmt/format.h>

namespace kj::judge {

std::string encode_frame(const nlohmann::json& message) {
  // Invalid UTF-8 (a compiler log quoting the source) must not make dump() throw.
  const std::string body = message.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  if (body.size() > kMaxMessageBytes)
    throw ProtocolError(fmt::format("message of {} bytes exceeds the protocol's limit of {}",
                                         body.size(), kMaxMessageBytes));
  const auto n = static_cast<std::uint32_t>(body.size());
  std::string frame(4, '\0');
  for (int i = 0; i < 4; ++i)
    frame[static_cast<std::size_t>(i)] = static_cast<char>((n >> (8 * i)) & 0xFFu);
  frame += body;
  return frame;
}

void FrameDecoder::feed(std::span<const char> bytes) {
  // Drop what was consumed before growing, so a long session does not keep every message.
  if (consumed_ > 0 && consumed_ == buffer_.size()) {
    buffer_.clear();
    consumed_ = 0;
  } else if (consumed_ > (1u << 20)) {
    buffer_.erase(0, consumed_);
    consumed_ = 0;
  }
  buffer_.append(bytes.data(), bytes.size());
}

std::optional<nlohmann::json> FrameDecoder::next() {
  if (pending() < 4) return std::nullopt;
  std::uint32_t n = 0;
  for (int i = 0; i < 4; ++i)
    n |= static_cast<std::uint32_t>(static_cast<unsigned char>(buffer_[consumed_ + i])) << (8 * i);
  if (n > kMaxMessageBytes)
    throw ProtocolError(
        fmt::format("a message announces {} bytes, over the limit of {}", n, kMaxMessageBytes));
  if (pending() < 4 + static_cast<std::size_t>(n)) return std::nullopt;
  const std::string_view body(buffer_.data() + consumed_ + 4, n);
  consumed_ += 4 + static_cast<std::size_t>(n);
  try {
    return nlohmann::json::parse(body);
  } catch (const nlohmann::json::exception& e) {
    throw ProtocolError(std::string("a message is not JSON: ") + e.what());
  }
}

bool write_message(int fd, const nlohmann::json& message) {
  const std::string frame = encode_frame(message);
  std::size_t done = 0;
  while (done < frame.size()) {
    // MSG_NOSIGNAL: a dead peer must be a return value, never a SIGPIPE that kills us.
    const ssize_t n = ::send(fd, frame.data() + done, frame.size() - done, MSG_NOSIGNAL);
    if (n < 0) {
      if (errno == EINTR) continue;
      return false;
    }
    done += static_cast<std::size_t>(n);
  }
  return true;
}

ReadResult read_message(int fd, FrameDecoder& decoder, std::optional<Clock::time_point> deadline) {
  ReadResult result;
  auto take = [&]() -> bool {
    try {
      std::optional<nlohmann::json> m = decoder.next();
      if (!m) return false;
      result.status = ReadResult::Status::message;
      result.message = std::move(*m);
    } catch (const ProtocolError& e) {
      result.status = ReadResult::Status::malformed;
      result.error = e.what();
    }
    return true;
  };
  if (take()) return result;
  char chunk[1 << 16];
  for (;;) {
    int timeout_ms = -1;
    if (deadline) {
      const auto left =
          std::chrono::duration_cast<std::chrono::milliseconds>(*deadline - Clock::now()).count();
      if (left <= 0) {
        result.status = ReadResult::Status::timeout;
        result.error = "no reply before the deadline";
        return result;
      }
      // poll takes an int; waits longer than that are split.
      timeout_ms = static_cast<int>(std::min<long long>(left, 1 << 30));
    }
    pollfd p{fd, POLLIN, 0};
    const int r = ::poll(&p, 1, timeout_ms);
    if (r < 0) {
      if (errno == EINTR) continue;
      result.status = ReadResult::Status::error;
      result.error = std::string("poll: ") + std::strerror(errno);
      return result;
    }
    if (r == 0) continue; // the deadline check above decides
    const ssize_t n = ::recv(fd, chunk, sizeof chunk, 0);
    if (n < 0) {
      if (errno == EINTR || errno == EAGAIN) continue;
      if (errno == ECONNRESET) {
        result.status = ReadResult::Status::eof;
        result.error = "connection reset";
        return result;
      }
      result.status = ReadResult::Status::error;
      result.error = std::string("recv: ") + std::strerror(errno);
      return result;
    }
    if (n == 0) {
      result.status = ReadResult::Status::eof;
      result.error = decoder.pending() > 0
                         ? fmt::format("end of stream inside a message ({} bytes of it read)",
                                       decoder.pending())
                         : "end of stream";
      return result;
    }
    decoder.feed(std::span<const char>(chunk, static_cast<std::size_t>(n)));
    if (take()) return result;
  }
}

std::string to_hex(std::span<const std::byte> bytes) {
  static constexpr char digits[] = "0123456789abcdef";
  std::string out;
  out.reserve(bytes.size() * 2);
  for (const std::byte b : bytes) {
    const auto v = static_cast<unsigned>(b);
    out += digits[v >> 4];
    out += digits[v & 15u];
  }
  return out;
}

std::vector<std::byte> from_hex(std::string_view hex) {
  if (hex.size() % 2 != 0) throw ProtocolError("hex string of odd length");
  auto digit = [](char c) -> unsigned {
    if (c >= '0' && c <= '9') return static_cast<unsigned>(c - '0');
    if (c >= 'a' && c <= 'f') return static_cast<unsigned>(c - 'a' + 10);
    if (c >= 'A' && c <= 'F') return static_cast<unsigned>(c - 'A' + 10);
    throw ProtocolError(fmt::format("'{}' is not a hex digit", c));
  };
  std::vector<std::byte> out(hex.size() / 2);
  for (std::size_t i = 0; i < out.size(); ++i)
    out[i] = static_cast<std::byte>((digit(hex[2 * i]) << 4) | digit(hex[2 * i + 1]));
  return out;
}

} // namespace kj::judge
