// The folders kjudge keeps state in under the temporary folder (util/private_folder.hpp): made
// 0700 for this user, and refused when another user made them first, when others may write
// them, or when they are a link; temporary ones get names no one can pick ahead.
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <string>

#include <gtest/gtest.h>

#include "kjudge/error.hpp"
#include "util/private_folder.hpp"

namespace {

namespace fs = std::filesystem;
using kj::util::make_private_folder;

class PrivateFolder : public ::testing::Test {
 protected:
  void SetUp() override { root_ = kj::util::new_private_temp_folder("kjudge-private-test"); }
  void TearDown() override {
    std::error_code ec;
    fs::remove_all(root_, ec);
  }
  fs::path root_;
};

unsigned mode_of(const fs::path& p) {
  struct stat st {};
  return ::lstat(p.c_str(), &st) == 0 ? (st.st_mode & 0777) : 0;
}

TEST_F(PrivateFolder, ANewOneIsMadeForThisUserAlone) {
  const fs::path dir = root_ / "a" / "cache";
  EXPECT_EQ(make_private_folder(dir), "");
  EXPECT_EQ(mode_of(dir), 0700u);
  EXPECT_EQ(make_private_folder(dir), ""); // and used again
}

TEST_F(PrivateFolder, AFolderOthersMayWriteIsRefused) {
  const fs::path dir = root_ / "shared";
  fs::create_directory(dir);
  fs::permissions(dir, fs::perms::all, fs::perm_options::replace);
  EXPECT_EQ(make_private_folder(dir), "is writable by other users (mode 777)");
  EXPECT_THROW(kj::util::require_private_folder(dir, "host build cache"), kj::SpecError);
}

TEST_F(PrivateFolder, AnotherUsersFolderIsRefused) {
  if (::geteuid() != 0) GTEST_SKIP() << "giving a folder to another user takes root";
  const fs::path dir = root_ / "theirs";
  fs::create_directory(dir);
  fs::permissions(dir, fs::perms::owner_all, fs::perm_options::replace);
  ASSERT_EQ(::chown(dir.c_str(), 65534, 65534), 0);
  EXPECT_EQ(make_private_folder(dir), "is owned by uid 65534, not this user's (0)");
}

TEST_F(PrivateFolder, ALinkIsRefused) {
  const fs::path target = root_ / "target";
  ASSERT_EQ(make_private_folder(target), "");
  fs::create_directory_symlink(target, root_ / "link");
  EXPECT_EQ(make_private_folder(root_ / "link"), "is a symbolic link");
}

TEST_F(PrivateFolder, TemporaryFoldersHaveNamesNoOneCanPickFirst) {
  const fs::path a = kj::util::new_private_temp_folder("kjudge-private-test");
  const fs::path b = kj::util::new_private_temp_folder("kjudge-private-test");
  EXPECT_NE(a, b);
  EXPECT_EQ(mode_of(a), 0700u);
  EXPECT_EQ(make_private_folder(a), "");
  fs::remove_all(a);
  fs::remove_all(b);
}

} // namespace
