// kj::Sha256 over OpenSSL's EVP interface (sha256.hpp).
#include "kjudge/sha256.hpp"

#include <openssl/evp.h>
#include <openssl/hmac.h>

#include "kjudge/error.hpp"

namespace kj {

namespace {
EVP_MD_CTX* ctx_of(void* p) { return static_cast<EVP_MD_CTX*>(p); }
}  // namespace

Sha256::Sha256() : ctx_(EVP_MD_CTX_new()) {
  KJ_EXPECTS(ctx_ != nullptr, "EVP_MD_CTX_new");
  KJ_EXPECTS(EVP_DigestInit_ex(ctx_of(ctx_), EVP_sha256(), nullptr) == 1, "SHA-256 init");
}

Sha256::~Sha256() { EVP_MD_CTX_free(ctx_of(ctx_)); }

void Sha256::update(const void* data, std::size_t n) {
  KJ_EXPECTS(EVP_DigestUpdate(ctx_of(ctx_), data, n) == 1, "SHA-256 update");
}

void Sha256::part_u64(std::uint64_t v) {
  unsigned char le[8];
  for (int i = 0; i < 8; ++i) le[i] = static_cast<unsigned char>(v >> (8 * i));
  update(le, sizeof le);
}

void Sha256::part(std::string_view bytes) {
  part_u64(bytes.size());
  update(bytes.data(), bytes.size());
}

std::vector<unsigned char> Sha256::digest() {
  std::vector<unsigned char> out(EVP_MAX_MD_SIZE);
  unsigned int len = 0;
  KJ_EXPECTS(EVP_DigestFinal_ex(ctx_of(ctx_), out.data(), &len) == 1, "SHA-256 final");
  out.resize(len);
  return out;
}

std::string Sha256::hex() {
  static constexpr char digits[] = "0123456789abcdef";
  std::string out;
  for (unsigned char b : digest()) {
    out += digits[b >> 4];
    out += digits[b & 15];
  }
  return out;
}

std::string sha256_hex(std::string_view bytes) {
  Sha256 h;
  h.update(bytes.data(), bytes.size());
  return h.hex();
}

std::vector<unsigned char> hmac_sha256(std::string_view key, std::string_view message) {
  std::vector<unsigned char> out(EVP_MAX_MD_SIZE);
  unsigned int n = 0;
  KJ_EXPECTS(HMAC(EVP_sha256(), key.data(), static_cast<int>(key.size()),
                  reinterpret_cast<const unsigned char*>(message.data()), message.size(),
                  out.data(), &n) != nullptr,
             "HMAC-SHA256");
  out.resize(n);
  return out;
}

}  // namespace kj
