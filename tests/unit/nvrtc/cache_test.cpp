// The compile cache: a miss then a hit with the same CUBIN, keys that move with everything that
// changes the output, corrupt entries recompiled (never trusted), the size cap evicting the
// least recently used entries, and writes that leave no temporary files behind.
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <random>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "backend/cuda/compile_cache.hpp"
#include "kjudge/nvrtc.hpp"

namespace {

namespace fs = std::filesystem;

// A fresh folder per test, removed afterwards.
class CacheTest : public ::testing::Test {
protected:
  void SetUp() override {
    std::random_device rd;
    dir_ = fs::temp_directory_path() /
           ("kjudge-nvrtc-cache-" + std::to_string(::getpid()) + "-" + std::to_string(rd()));
    fs::create_directories(dir_);
  }
  void TearDown() override {
    std::error_code ec;
    fs::remove_all(dir_, ec);
  }
  kj::CompileOptions options() const {
    kj::CompileOptions o;
    o.arch = 90;
    o.kjudge_include = KJ_SOURCE_DIR "/include";
    o.cache_dir = dir_;
    return o;
  }
  std::vector<fs::path> files() const {
    std::vector<fs::path> out;
    for (const auto& e : fs::directory_iterator(dir_))
      out.push_back(e.path());
    return out;
  }
  fs::path dir_;
};

const char* const source = R"(
#include "kjudge/device.cuh"
template <class T>
__global__ void twice(const T* x, T* y, int n) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] = x[i] * kj::c<T>(2.0);
}
)";

TEST_F(CacheTest, MissThenHit) {
  const auto first = kj::compile_module(source, "t.cu", {"twice<float>"}, options());
  EXPECT_FALSE(first.from_cache);
  ASSERT_EQ(files().size(), 1u);
  EXPECT_EQ(files()[0].filename().string(), first.cache_key + ".kjc");

  const auto second = kj::compile_module(source, "t.cu", {"twice<float>"}, options());
  EXPECT_TRUE(second.from_cache);
  EXPECT_EQ(second.cache_key, first.cache_key);
  EXPECT_EQ(second.cubin, first.cubin);
  EXPECT_EQ(second.ptx, first.ptx);
  EXPECT_EQ(second.log, first.log);
  ASSERT_EQ(second.kernels.size(), 1u);
  EXPECT_EQ(second.kernels[0].expression, first.kernels[0].expression);
  EXPECT_EQ(second.kernels[0].lowered, first.kernels[0].lowered);
  EXPECT_EQ(second.kernels[0].demangled, first.kernels[0].demangled);
  EXPECT_EQ(second.kernels[0].param_types, first.kernels[0].param_types);
  EXPECT_EQ(second.kernels[0].extern_c, first.kernels[0].extern_c);
}

// cached_module reads what compile_module stored, and never compiles: nothing before the first
// compile, nothing without a cache folder or for another source, and the stored module after;
// a precomputed header_set_hash gives the same key as the one computed inside.
TEST_F(CacheTest, CachedModuleOnlyReads) {
  EXPECT_FALSE(kj::cached_module(source, "t.cu", {"twice<float>"}, options()));
  EXPECT_TRUE(files().empty());
  const auto compiled = kj::compile_module(source, "t.cu", {"twice<float>"}, options());
  kj::CompileOptions with_hash = options();
  with_hash.header_set_hash = kj::header_set_hash(with_hash.kjudge_include);
  for (const kj::CompileOptions& o : {options(), with_hash}) {
    const auto hit = kj::cached_module(source, "t.cu", {"twice<float>"}, o);
    ASSERT_TRUE(hit);
    EXPECT_TRUE(hit->from_cache);
    EXPECT_EQ(hit->cache_key, compiled.cache_key);
    EXPECT_EQ(hit->cubin, compiled.cubin);
    ASSERT_EQ(hit->kernels.size(), 1u);
    EXPECT_EQ(hit->kernels[0].lowered, compiled.kernels[0].lowered);
  }
  EXPECT_FALSE(kj::cached_module(source, "t.cu", {"twice<double>"}, options()));
  EXPECT_FALSE(kj::cached_module(std::string(source) + "\n", "t.cu", {"twice<float>"}, options()));
  kj::CompileOptions no_cache = options();
  no_cache.cache_dir.clear();
  EXPECT_FALSE(kj::cached_module(source, "t.cu", {"twice<float>"}, no_cache));
  // An include off the list fails compile_module; here it is simply not a hit.
  EXPECT_FALSE(kj::cached_module("#include <stdio.h>\n", "t.cu", {"k"}, options()));
  EXPECT_EQ(files().size(), 1u);
}

TEST_F(CacheTest, KeyMovesWithEveryInput) {
  const auto base = kj::compile_module(source, "t.cu", {"twice<float>"}, options()).cache_key;
  auto o = options();
  o.options = {"-use_fast_math"};
  const std::vector<std::string> keys = {
      kj::compile_module(std::string(source) + "\n", "t.cu", {"twice<float>"}, options()).cache_key,
      kj::compile_module(source, "u.cu", {"twice<float>"}, options()).cache_key,
      kj::compile_module(source, "t.cu", {"twice<double>"}, options()).cache_key,
      kj::compile_module(source, "t.cu", {"twice<float>", "twice<double>"}, options()).cache_key,
      kj::compile_module(source, "t.cu", {"twice<float>"}, o).cache_key,
  };
  auto arch = options();
  arch.arch_specific = true;
  const std::string arch_key = kj::compile_module(source, "t.cu", {"twice<float>"}, arch).cache_key;
  for (const auto& k : keys)
    EXPECT_NE(k, base);
  EXPECT_NE(arch_key, base);
  // Same inputs, same key, also without a cache folder.
  auto no_cache = options();
  no_cache.cache_dir.clear();
  EXPECT_EQ(kj::compile_module(source, "t.cu", {"twice<float>"}, no_cache).cache_key, base);
}

TEST_F(CacheTest, KeyCoversEveryPart) {
  kj::cuda_cache::KeyParts p{"b", "n", "h", {"-a"}, "f.cu", {"k"}, "src"};
  const std::string base = kj::cuda_cache::cache_key(p);
  auto changed = [&](auto edit) {
    auto q = p;
    edit(q);
    return kj::cuda_cache::cache_key(q);
  };
  EXPECT_NE(changed([](auto& q) { q.build_id = "c"; }), base);
  EXPECT_NE(changed([](auto& q) { q.nvrtc_identity = "m"; }), base);
  EXPECT_NE(changed([](auto& q) { q.header_set = "i"; }), base);
  EXPECT_NE(changed([](auto& q) { q.argv = {"-b"}; }), base);
  EXPECT_NE(changed([](auto& q) { q.argv = {"-a", ""}; }), base);
  EXPECT_NE(changed([](auto& q) { q.file_name = "g.cu"; }), base);
  EXPECT_NE(changed([](auto& q) { q.name_expressions = {"k", "k"}; }), base);
  EXPECT_NE(changed([](auto& q) { q.source = "src "; }), base);
  // Framing: moving bytes between parts changes the key.
  EXPECT_NE(changed([](auto& q) {
              q.file_name = "f.cuk";
              q.name_expressions = {""};
            }),
            base);
  EXPECT_EQ(changed([](auto&) {}), base);
}

TEST_F(CacheTest, HeaderSetAndLibraryIdentity) {
  const auto dirs = kj::toolkit_include_dirs();
  const std::string a = kj::cuda_cache::pinned_header_set_hash(KJ_SOURCE_DIR "/include", dirs);
  EXPECT_EQ(a, kj::cuda_cache::pinned_header_set_hash(KJ_SOURCE_DIR "/include", dirs));
  EXPECT_NE(a, kj::cuda_cache::pinned_header_set_hash("", dirs));

  // A kjudge header edited in place changes the hash (a copy of the folder stands in).
  const fs::path copy = dir_ / "include";
  fs::copy(KJ_SOURCE_DIR "/include", copy, fs::copy_options::recursive);
  const std::string before = kj::cuda_cache::pinned_header_set_hash(copy, dirs);
  { std::ofstream(copy / "kjudge" / "device.cuh", std::ios::app) << "\n// edited\n"; }
  const fs::path copy2 = dir_ / "include2"; // memoised per folder: hash a second copy
  fs::copy(copy, copy2, fs::copy_options::recursive);
  EXPECT_NE(before, kj::cuda_cache::pinned_header_set_hash(copy2, dirs));

  const std::string id = kj::cuda_cache::nvrtc_library_identity();
  EXPECT_NE(id.find("nvrtc " + kj::nvrtc_version()), std::string::npos) << id;
  EXPECT_NE(id.find("libnvrtc"), std::string::npos) << id;
}

TEST_F(CacheTest, CorruptEntryIsRecompiledAndReplaced) {
  const auto first = kj::compile_module(source, "t.cu", {"twice<float>"}, options());
  const fs::path entry = kj::cuda_cache::entry_path(dir_, first.cache_key);
  const auto size = fs::file_size(entry);
  for (const std::uint64_t offset : {std::uint64_t{3}, std::uint64_t{20}, size / 2, size - 1}) {
    {
      std::fstream f(entry, std::ios::in | std::ios::out | std::ios::binary);
      f.seekg(static_cast<std::streamoff>(offset));
      char c = 0;
      f.read(&c, 1);
      f.seekp(static_cast<std::streamoff>(offset));
      c = static_cast<char>(c ^ 0x5a);
      f.write(&c, 1);
    }
    EXPECT_FALSE(kj::cuda_cache::load(dir_, first.cache_key)) << "offset " << offset;
    const auto again = kj::compile_module(source, "t.cu", {"twice<float>"}, options());
    EXPECT_FALSE(again.from_cache) << "offset " << offset;
    EXPECT_EQ(again.cubin, first.cubin);
    EXPECT_TRUE(kj::compile_module(source, "t.cu", {"twice<float>"}, options()).from_cache);
  }
  // A truncated entry, and an entry filed under another key, are not trusted either.
  fs::resize_file(entry, size - 7);
  EXPECT_FALSE(kj::cuda_cache::load(dir_, first.cache_key));
  const auto rebuilt = kj::compile_module(source, "t.cu", {"twice<float>"}, options());
  EXPECT_FALSE(rebuilt.from_cache);
  const std::string other(64, 'a');
  fs::copy_file(entry, kj::cuda_cache::entry_path(dir_, other));
  EXPECT_FALSE(kj::cuda_cache::load(dir_, other));
}

TEST_F(CacheTest, EntryRoundTripAndRejects) {
  kj::CompiledModule m;
  m.cubin = {'\x7f', 'E', 'L', 'F', '\0', '\1'};
  m.ptx = ".version 9.0";
  m.log = "warning";
  m.kernels.push_back({"k<4>", "_Z1kILi4EEvPf", "void k<4>(float*)", {"float*"}, false});
  m.kernels.push_back({"c", "c", "c", {}, true});
  const std::string key(64, 'b');
  const std::string bytes = kj::cuda_cache::encode_entry(key, m);
  const auto back = kj::cuda_cache::decode_entry(bytes, key);
  ASSERT_TRUE(back);
  EXPECT_EQ(back->cubin, m.cubin);
  EXPECT_EQ(back->ptx, m.ptx);
  EXPECT_EQ(back->log, m.log);
  ASSERT_EQ(back->kernels.size(), 2u);
  EXPECT_EQ(back->kernels[0].param_types, m.kernels[0].param_types);
  EXPECT_TRUE(back->kernels[1].extern_c);
  EXPECT_TRUE(back->from_cache);
  EXPECT_EQ(back->cache_key, key);
  EXPECT_FALSE(kj::cuda_cache::decode_entry(bytes, std::string(64, 'c')));
  EXPECT_FALSE(kj::cuda_cache::decode_entry(bytes.substr(0, bytes.size() - 1), key));
  EXPECT_FALSE(kj::cuda_cache::decode_entry(bytes + "x", key));
  EXPECT_FALSE(kj::cuda_cache::decode_entry("", key));
  for (std::size_t i = 0; i < bytes.size(); i += 7) {
    std::string flipped = bytes;
    flipped[i] = static_cast<char>(flipped[i] ^ 1);
    EXPECT_FALSE(kj::cuda_cache::decode_entry(flipped, key)) << "byte " << i;
  }
}

TEST_F(CacheTest, CapEvictsLeastRecentlyUsed) {
  // Six entries of known size with mtimes one minute apart; the cap holds three.
  kj::CompiledModule m;
  m.cubin.assign(1000, 'x');
  std::vector<std::string> keys;
  const auto now = fs::file_time_type::clock::now();
  for (int i = 0; i < 6; ++i) {
    keys.push_back(std::string(63, 'a') + static_cast<char>('0' + i));
    ASSERT_TRUE(kj::cuda_cache::store(dir_, keys.back(), m, 1ull << 30));
    fs::last_write_time(kj::cuda_cache::entry_path(dir_, keys.back()),
                        now - std::chrono::minutes(60 - i));
  }
  const auto entry_size = fs::file_size(kj::cuda_cache::entry_path(dir_, keys[0]));
  // Reading entry 0 makes it the most recently used.
  EXPECT_TRUE(kj::cuda_cache::load(dir_, keys[0]));
  // Entries 1, 2, 3 (oldest after the touch) go; 4, 5 and 0 stay.
  const auto left = kj::cuda_cache::evict(dir_, 3 * entry_size);
  EXPECT_EQ(left, 3 * entry_size);
  for (int i : {1, 2, 3})
    EXPECT_FALSE(fs::exists(kj::cuda_cache::entry_path(dir_, keys[i]))) << i;
  for (int i : {0, 4, 5})
    EXPECT_TRUE(fs::exists(kj::cuda_cache::entry_path(dir_, keys[i]))) << i;
}

TEST_F(CacheTest, StoreKeepsTheFolderUnderTheCap) {
  kj::CompiledModule m;
  m.cubin.assign(1000, 'x');
  const std::uint64_t cap = 5000;
  for (int i = 0; i < 20; ++i) {
    const std::string key = std::string(62, 'c') + std::to_string(10 + i);
    ASSERT_TRUE(kj::cuda_cache::store(dir_, key, m, cap));
    // The entry just written always survives, whatever its age.
    EXPECT_TRUE(fs::exists(kj::cuda_cache::entry_path(dir_, key)));
    std::uint64_t total = 0;
    for (const auto& f : files())
      total += fs::file_size(f);
    EXPECT_LE(total, cap) << "after write " << i;
  }
  // A file that is not an entry is left alone.
  { std::ofstream(dir_ / "README") << "not ours"; }
  kj::cuda_cache::evict(dir_, 0);
  EXPECT_TRUE(fs::exists(dir_ / "README"));
}

TEST_F(CacheTest, StaleTemporaryFilesAreSweptFreshOnesKept) {
  { std::ofstream(dir_ / ".tmp-old") << "partial"; }
  { std::ofstream(dir_ / ".tmp-new") << "partial"; }
  fs::last_write_time(dir_ / ".tmp-old", fs::file_time_type::clock::now() - std::chrono::hours(2));
  kj::cuda_cache::evict(dir_, 1ull << 30);
  EXPECT_FALSE(fs::exists(dir_ / ".tmp-old"));
  EXPECT_TRUE(fs::exists(dir_ / ".tmp-new")); // a writer may still be at work
}

TEST_F(CacheTest, WritesLeaveNoTemporaryFiles) {
  for (const char* n : {"twice<float>", "twice<double>"})
    kj::compile_module(source, "t.cu", {n}, options());
  for (const auto& f : files()) {
    EXPECT_EQ(f.extension(), ".kjc") << f;
    EXPECT_NE(f.filename().string().rfind(".tmp-", 0), 0u) << f;
  }
  EXPECT_EQ(files().size(), 2u);
}

TEST_F(CacheTest, ConcurrentWritersNeverExposeAPartialEntry) {
  // Three processes rewrite one entry while this one reads it: once the entry exists, every read
  // must find it whole (a partial file would fail its checksum and read as a miss).
  kj::CompiledModule m;
  m.cubin.assign(256 * 1024, 'z');
  m.ptx.assign(64 * 1024, 'p');
  const std::string key(64, 'd');
  std::vector<pid_t> children;
  for (int c = 0; c < 3; ++c) {
    const pid_t pid = ::fork();
    ASSERT_GE(pid, 0);
    if (pid == 0) {
      for (int i = 0; i < 100; ++i)
        kj::cuda_cache::store(dir_, key, m, 1ull << 30);
      ::_exit(0);
    }
    children.push_back(pid);
  }
  int hits = 0, misses_after_hit = 0;
  auto all_done = [&] {
    for (auto& pid : children) {
      if (pid > 0 && ::waitpid(pid, nullptr, WNOHANG) == pid) pid = 0;
    }
    return std::all_of(children.begin(), children.end(), [](pid_t p) { return p == 0; });
  };
  while (!all_done()) {
    const auto got = kj::cuda_cache::load(dir_, key);
    if (got) {
      ++hits;
      EXPECT_EQ(got->cubin, m.cubin);
    } else if (hits > 0) {
      ++misses_after_hit;
    }
  }
  EXPECT_EQ(misses_after_hit, 0);
  EXPECT_TRUE(kj::cuda_cache::load(dir_, key));
  for (const auto& f : files())
    EXPECT_EQ(f.extension(), ".kjc") << f;
}

TEST_F(CacheTest, UnwritableCacheOnlyCostsACompile) {
  auto o = options();
  o.cache_dir = dir_ / "file-not-folder";
  { std::ofstream(o.cache_dir) << "x"; }
  const auto m = kj::compile_module(source, "t.cu", {"twice<float>"}, o);
  EXPECT_FALSE(m.from_cache);
  EXPECT_FALSE(m.cubin.empty());
}

TEST_F(CacheTest, FailedCompilesAreNotCached) {
  EXPECT_THROW(kj::compile_module("__global__ void k( {}\n", "t.cu", {"k"}, options()),
               kj::CompileError);
  EXPECT_TRUE(files().empty());
}

} // namespace
