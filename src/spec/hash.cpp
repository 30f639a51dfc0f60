// The problem hash: SHA-256 over problem.toml and every file it names, so that a case id
// (`<hash8>:...`) pins the exact problem a result came from and a replay against an edited
// problem is refused. Each part is framed by its name and length, so moving bytes from one file
// to another, or renaming a file, changes the hash.
#include <openssl/evp.h>

#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "kjudge/error.hpp"
#include "spec/internal.hpp"

namespace kj::detail {

std::string hash_parts(const std::vector<std::pair<std::string, std::string>>& parts) {
  std::unique_ptr<EVP_MD_CTX, decltype(&EVP_MD_CTX_free)> ctx(EVP_MD_CTX_new(), EVP_MD_CTX_free);
  KJ_EXPECTS(ctx != nullptr, "EVP_MD_CTX_new");
  KJ_EXPECTS(EVP_DigestInit_ex(ctx.get(), EVP_sha256(), nullptr) == 1, "SHA-256 init");
  auto feed = [&](const void* data, std::size_t n) {
    KJ_EXPECTS(EVP_DigestUpdate(ctx.get(), data, n) == 1, "SHA-256 update");
  };
  auto feed_length = [&](std::uint64_t n) {
    unsigned char le[8];
    for (int i = 0; i < 8; ++i)
      le[i] = static_cast<unsigned char>(n >> (8 * i));
    feed(le, sizeof le);
  };
  for (const auto& [name, bytes] : parts) {
    feed_length(name.size());
    feed(name.data(), name.size());
    feed_length(bytes.size());
    feed(bytes.data(), bytes.size());
  }
  unsigned char digest[EVP_MAX_MD_SIZE];
  unsigned int len = 0;
  KJ_EXPECTS(EVP_DigestFinal_ex(ctx.get(), digest, &len) == 1, "SHA-256 final");
  static constexpr char hex[] = "0123456789abcdef";
  std::string out;
  for (unsigned int i = 0; i < len; ++i) {
    out += hex[digest[i] >> 4];
    out += hex[digest[i] & 15];
  }
  return out;
}

} // namespace kj::detail
