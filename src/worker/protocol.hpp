// The wire format between the oracle and a candidate worker: each message is a 4-byte
// little-endian length followed by that many bytes of JSON, over a SOCK_STREAM socketpair.
// Reads take a deadline, because the other end is an untrusted process that may hang or die
// mid-message; a reader distinguishes a clean end of stream, a timeout and garbage, since each
// becomes a different verdict (crash, timeout, internal).
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "kjudge/error.hpp"

namespace kj::judge {

using Clock = std::chrono::steady_clock;

// A message that breaks the protocol: too long, not JSON, a field missing or of the wrong type.
// kjudge's own processes never send one, so it means a broken or hostile peer; the oracle reads
// one from a worker as that worker's failure.
class ProtocolError : public ErrorOfKind<ErrorKind::internal> {
  using ErrorOfKind::ErrorOfKind;
};

// Largest message either side accepts. The biggest legitimate one is a compile reply with a
// trimmed log; anything near this is a broken or hostile peer.
inline constexpr std::uint32_t kMaxMessageBytes = 64u << 20;

// The 4-byte header and the body as one buffer, ready to write.
std::string encode_frame(const nlohmann::json& message);

// Incremental decoder: feed bytes as they arrive, take whole messages out. Throws
// ProtocolError on a length over kMaxMessageBytes or a body that is not JSON.
class FrameDecoder {
public:
  void feed(std::span<const char> bytes);
  std::optional<nlohmann::json> next();
  // Bytes buffered towards a message not yet complete.
  std::size_t pending() const { return buffer_.size() - consumed_; }

private:
  std::string buffer_;
  std::size_t consumed_ = 0;
};

struct ReadResult {
  enum class Status { message, eof, timeout, malformed, error };
  Status status = Status::error;
  nlohmann::json message; // valid when status == message
  std::string error;      // what went wrong otherwise
};

// Write one whole message; false when the peer is gone (EPIPE, ECONNRESET). Never raises
// SIGPIPE. Blocks until written: the peer is expected to be reading.
bool write_message(int fd, const nlohmann::json& message);

// Read one whole message, waiting until `deadline` at most (nullopt: forever). A partial
// message at the end of the stream is `eof` too: the peer died mid-write.
ReadResult read_message(int fd, FrameDecoder& decoder,
                        std::optional<Clock::time_point> deadline = std::nullopt);

// Bytes as lowercase hex and back (argument values, IPC handles); from_hex throws
// ProtocolError on an odd length or a non-hex digit.
std::string to_hex(std::span<const std::byte> bytes);
std::vector<std::byte> from_hex(std::string_view hex);

} // namespace kj::judge
