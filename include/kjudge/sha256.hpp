// SHA-256 and HMAC-SHA256 (OpenSSL underneath), for everything kjudge identifies by content: problem hashes,
// candidate hashes in manifests, NVRTC cache keys. `part` frames its bytes with their length,
// so adjacent parts cannot trade bytes without changing the digest.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace kj {

class Sha256 {
public:
  Sha256();
  ~Sha256();
  Sha256(const Sha256&) = delete;
  Sha256& operator=(const Sha256&) = delete;
  void update(const void* data, std::size_t n);
  void part(std::string_view bytes);   // length (8 bytes, little-endian), then the bytes
  void part_u64(std::uint64_t v);
  std::string hex();                   // ends the digest
  std::vector<unsigned char> digest(); // ends the digest (32 bytes)

private:
  void* ctx_;  // EVP_MD_CTX, kept out of this header
};

// Hex SHA-256 of one block of bytes.
std::string sha256_hex(std::string_view bytes);

// HMAC-SHA256 of `message` under `key` (32 bytes): what a secret keys (hidden shape draws).
std::vector<unsigned char> hmac_sha256(std::string_view key, std::string_view message);

}  // namespace kj
