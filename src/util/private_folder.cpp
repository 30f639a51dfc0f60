// Private folders for kjudge's state (private_folder.hpp).
#include "util/private_folder.hpp"

#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <vector>

#include <fmt/format.h>

#include "kjudge/error.hpp"

namespace kj::util {

namespace fs = std::filesystem;

std::string make_private_folder(const fs::path& dir) {
  std::error_code ec;
  if (!fs::exists(fs::symlink_status(dir, ec))) {
    fs::create_directories(dir.parent_path(), ec);
    if (::mkdir(dir.c_str(), 0700) != 0 && errno != EEXIST)
      return fmt::format("cannot be created: {}", std::strerror(errno));
  }
  struct stat st {};
  if (::lstat(dir.c_str(), &st) != 0) return fmt::format("cannot be read: {}", std::strerror(errno));
  if (S_ISLNK(st.st_mode)) return "is a symbolic link";
  if (!S_ISDIR(st.st_mode)) return "is not a folder";
  if (st.st_uid != ::geteuid())
    return fmt::format("is owned by uid {}, not this user's ({})", st.st_uid, ::geteuid());
  if ((st.st_mode & 022) != 0)
    return fmt::format("is writable by other users (mode {:o})", st.st_mode & 0777);
  return "";
}

void require_private_folder(const fs::path& dir, std::string_view what) {
  if (const std::string why = make_private_folder(dir); !why.empty())
    throw SpecError({dir.string(), std::string(what), 0, 0},
                    fmt::format("{}: kjudge keeps its state only in a folder of this user's "
                                "alone", why));
}

fs::path new_private_temp_folder(std::string_view prefix) {
  std::string pattern = (fs::temp_directory_path() / fmt::format("{}-XXXXXX", prefix)).string();
  std::vector<char> buffer(pattern.begin(), pattern.end());
  buffer.push_back('\0');
  if (::mkdtemp(buffer.data()) == nullptr)
    throw InternalError(fmt::format("cannot make a folder {}: {}", pattern, std::strerror(errno)));
  return fs::path(buffer.data());
}

fs::path per_user_temp_path(std::string_view name) {
  return fs::temp_directory_path() / fmt::format("{}-{}", name, ::geteuid());
}

} // namespace kj::util
