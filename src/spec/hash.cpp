// The problem hash: SHA-256 over problem.toml and every file it names, so that a case id
// (`<hash8>:...`) pins the exact problem a result came from and a replay against an edited
// problem is refused. Each part is framed by its name and length, so moving bytes from one file
// to another, or renaming a file, changes the hash.
#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "kjudge/sha256.hpp"
#include "spec/internal.hpp"

namespace kj::detail {

std::string hash_parts(const std::vector<std::pair<std::string, std::string>>& parts) {
  Sha256 h;
  for (const auto& [name, bytes] : parts) {
    h.part(name);
    h.part(bytes);
  }
  return h.hex();
}

} // namespace kj::detail
