// The oracle/worker wire format: the 4-byte little-endian length, a decoder that survives
// messages split anywhere or packed together, the limits that stop a hostile length, reads that
// end in a timeout or an end of stream instead of hanging, and the hex of argument bytes.
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <string>
#include <thread>

#include <gtest/gtest.h>

#include "worker/protocol.hpp"

namespace {

using namespace kj::judge;
using nlohmann::json;

struct SocketPair {
  int a = -1, b = -1;
  SocketPair() {
    int fds[2];
    EXPECT_EQ(::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, fds), 0);
    a = fds[0];
    b = fds[1];
  }
  ~SocketPair() {
    if (a >= 0) ::close(a);
    if (b >= 0) ::close(b);
  }
  void close_b() {
    ::close(b);
    b = -1;
  }
};

TEST(Frame, LengthIsFourBytesLittleEndian) {
  const std::string f = encode_frame(json{{"op", "exit"}});
  const std::string body = R"({"op":"exit"})";
  ASSERT_EQ(f.size(), 4 + body.size());
  EXPECT_EQ(static_cast<unsigned char>(f[0]), body.size());
  EXPECT_EQ(f[1], '\0');
  EXPECT_EQ(f[2], '\0');
  EXPECT_EQ(f[3], '\0');
  EXPECT_EQ(f.substr(4), body);

  const std::string big = encode_frame(json(std::string(300, 'x'))); // 302 bytes of JSON
  EXPECT_EQ(static_cast<unsigned char>(big[0]), 302 % 256);
  EXPECT_EQ(static_cast<unsigned char>(big[1]), 302 / 256);
}

TEST(Frame, InvalidUtf8IsReplacedNotThrown) {
  // A compiler log quoting the candidate's bytes must still cross the wire.
  const std::string f = encode_frame(json{{"log", std::string("bad \xff byte")}});
  FrameDecoder d;
  d.feed(f);
  const auto m = d.next();
  ASSERT_TRUE(m);
  EXPECT_NE((*m)["log"].get<std::string>().find("bad"), std::string::npos);
}

TEST(FrameDecoder, ByteByByte) {
  const json msg = {{"op", "run"}, {"n", 42}, {"s", "h\u00e9"}};
  const std::string f = encode_frame(msg);
  FrameDecoder d;
  for (std::size_t i = 0; i + 1 < f.size(); ++i) {
    d.feed(std::span<const char>(&f[i], 1));
    EXPECT_FALSE(d.next()) << i;
  }
  d.feed(std::span<const char>(&f.back(), 1));
  const auto m = d.next();
  ASSERT_TRUE(m);
  EXPECT_EQ(*m, msg);
  EXPECT_EQ(d.pending(), 0u);
  EXPECT_FALSE(d.next());
}

TEST(FrameDecoder, SeveralMessagesInOneFeed) {
  const std::string f = encode_frame(json{{"i", 1}}) + encode_frame(json{{"i", 2}}) +
                        encode_frame(json{{"i", 3}}).substr(0, 5);
  FrameDecoder d;
  d.feed(f);
  EXPECT_EQ((*d.next())["i"], 1);
  EXPECT_EQ((*d.next())["i"], 2);
  EXPECT_FALSE(d.next());
  EXPECT_EQ(d.pending(), 5u);
  const std::string rest = encode_frame(json{{"i", 3}}).substr(5);
  d.feed(rest);
  EXPECT_EQ((*d.next())["i"], 3);
}

TEST(FrameDecoder, RejectsAHostileLength) {
  FrameDecoder d;
  const char header[4] = {'\xff', '\xff', '\xff', '\x7f'};
  d.feed(std::span<const char>(header, 4));
  EXPECT_THROW(d.next(), ProtocolError);
}

TEST(FrameDecoder, RejectsABodyThatIsNotJson) {
  FrameDecoder d;
  d.feed(std::string("\x03\x00\x00\x00{{{", 7));
  EXPECT_THROW(d.next(), ProtocolError);
}

TEST(ReadMessage, OverASocket) {
  SocketPair p;
  ASSERT_TRUE(write_message(p.a, {{"x", 1}}));
  ASSERT_TRUE(write_message(p.a, {{"x", 2}}));
  FrameDecoder d;
  auto r = read_message(p.b, d, Clock::now() + std::chrono::seconds(5));
  ASSERT_EQ(r.status, ReadResult::Status::message);
  EXPECT_EQ(r.message["x"], 1);
  r = read_message(p.b, d, Clock::now() + std::chrono::seconds(5));
  ASSERT_EQ(r.status, ReadResult::Status::message);
  EXPECT_EQ(r.message["x"], 2);
}

TEST(ReadMessage, LargeMessageWhileTheWriterIsStillWriting) {
  SocketPair p;
  const std::string blob(5 << 20, 'q');
  std::thread writer([&] { EXPECT_TRUE(write_message(p.a, {{"blob", blob}})); });
  FrameDecoder d;
  const auto r = read_message(p.b, d, Clock::now() + std::chrono::seconds(20));
  writer.join();
  ASSERT_EQ(r.status, ReadResult::Status::message) << r.error;
  EXPECT_EQ(r.message["blob"].get<std::string>().size(), blob.size());
}

TEST(ReadMessage, TimesOutAtTheDeadline) {
  SocketPair p;
  FrameDecoder d;
  const auto start = Clock::now();
  const auto r = read_message(p.b, d, start + std::chrono::milliseconds(150));
  EXPECT_EQ(r.status, ReadResult::Status::timeout);
  EXPECT_GE(Clock::now() - start, std::chrono::milliseconds(140));
}

TEST(ReadMessage, TimesOutOnAHalfMessage) {
  SocketPair p;
  const std::string f = encode_frame(json{{"x", 1}});
  ASSERT_EQ(::write(p.a, f.data(), 6), 6);
  FrameDecoder d;
  const auto r = read_message(p.b, d, Clock::now() + std::chrono::milliseconds(100));
  EXPECT_EQ(r.status, ReadResult::Status::timeout);
}

TEST(ReadMessage, EndOfStream) {
  SocketPair p;
  FrameDecoder d;
  p.close_b(); // the writer's end
  const auto r = read_message(p.a, d, Clock::now() + std::chrono::seconds(5));
  EXPECT_EQ(r.status, ReadResult::Status::eof);
  EXPECT_EQ(r.error, "end of stream");
}

TEST(ReadMessage, EndOfStreamInsideAMessage) {
  SocketPair p;
  const std::string f = encode_frame(json{{"x", 1}});
  ASSERT_EQ(::write(p.b, f.data(), 7), 7);
  p.close_b();
  FrameDecoder d;
  const auto r = read_message(p.a, d, Clock::now() + std::chrono::seconds(5));
  EXPECT_EQ(r.status, ReadResult::Status::eof);
  EXPECT_NE(r.error.find("inside a message"), std::string::npos) << r.error;
}

TEST(ReadMessage, Malformed) {
  SocketPair p;
  const std::string bad("\x02\x00\x00\x00}{", 6);
  ASSERT_EQ(::write(p.b, bad.data(), bad.size()), 6);
  FrameDecoder d;
  const auto r = read_message(p.a, d, Clock::now() + std::chrono::seconds(5));
  EXPECT_EQ(r.status, ReadResult::Status::malformed);
}

TEST(WriteMessage, ToADeadPeerFailsWithoutSigpipe) {
  SocketPair p;
  p.close_b();
  // Without MSG_NOSIGNAL this would kill the test process.
  EXPECT_FALSE(write_message(p.a, {{"op", "run"}, {"pad", std::string(1 << 20, 'x')}}));
}

TEST(Hex, RoundTrip) {
  const std::vector<std::byte> bytes = {std::byte{0x00}, std::byte{0x7f}, std::byte{0x80},
                                        std::byte{0xff}, std::byte{0x0a}};
  EXPECT_EQ(to_hex(bytes), "007f80ff0a");
  EXPECT_EQ(from_hex("007f80ff0a"), bytes);
  EXPECT_EQ(from_hex("007F80FF0A"), bytes);
  EXPECT_TRUE(from_hex("").empty());
  EXPECT_THROW(from_hex("abc"), ProtocolError);
  EXPECT_THROW(from_hex("zz"), ProtocolError);
}

} // namespace
