// The content-addressed NVRTC cache (see compile_cache.hpp for the contract). What it guards
// against: a stale entry after any change that could alter the CUBIN (the key), a partial entry
// seen by a concurrent reader (rename), a torn or altered entry (checksum, verified on every
// read), and a folder that grows without bound (the size cap, least recently used first).
#include "backend/cuda/compile_cache.hpp"

#include <dlfcn.h>
#include <nvrtc.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstring>
#include <fstream>
#include <map>
#include <mutex>
#include <random>
#include <sstream>
#include <system_error>
#include <utility>

#include <fmt/format.h>

#include "kjudge/error.hpp"

namespace kj::cuda_cache {

namespace fs = std::filesystem;

namespace {

// Bump when the compile procedure (options kjudge adds, how symbols are read) or the entry
// format changes: old entries then stop matching instead of being misread.
constexpr std::string_view compile_schema = "kjudge-nvrtc-cache-1";

constexpr char entry_magic[8] = {'K', 'J', 'N', 'V', 'R', 'T', 'C', '\x01'};
constexpr std::size_t digest_bytes = 32;
constexpr std::size_t header_bytes = sizeof entry_magic + 8 + digest_bytes;

void put_u64(std::string& out, std::uint64_t v) {
  for (int i = 0; i < 8; ++i)
    out += static_cast<char>((v >> (8 * i)) & 0xff);
}

void put_bytes(std::string& out, std::string_view bytes) {
  put_u64(out, bytes.size());
  out.append(bytes);
}

// Reads the payload back; any overrun marks the whole entry bad.
class Reader {
public:
  explicit Reader(std::string_view bytes) : bytes_(bytes) {}
  bool ok() const { return ok_; }
  bool at_end() const { return pos_ == bytes_.size(); }
  std::uint64_t u64() {
    if (!ok_ || bytes_.size() - pos_ < 8) return fail();
    std::uint64_t v = 0;
    for (int i = 0; i < 8; ++i)
      v |= static_cast<std::uint64_t>(static_cast<unsigned char>(bytes_[pos_ + i])) << (8 * i);
    pos_ += 8;
    return v;
  }
  std::string_view bytes() {
    const std::uint64_t n = u64();
    if (!ok_ || bytes_.size() - pos_ < n) {
      fail();
      return {};
    }
    std::string_view out = bytes_.substr(pos_, n);
    pos_ += n;
    return out;
  }
  // A count that cannot exceed what is left (each item takes at least 8 bytes): a corrupt
  // count must not make the decoder reserve gigabytes.
  std::uint64_t count() {
    const std::uint64_t n = u64();
    if (ok_ && n > (bytes_.size() - pos_) / 8) return fail();
    return n;
  }

private:
  std::uint64_t fail() {
    ok_ = false;
    return 0;
  }
  std::string_view bytes_;
  std::size_t pos_ = 0;
  bool ok_ = true;
};

std::optional<std::string> read_whole(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return std::nullopt;
  std::ostringstream buffer;
  buffer << in.rdbuf();
  if (in.bad()) return std::nullopt;
  return std::move(buffer).str();
}

std::int64_t mtime_ns(const fs::path& path, std::error_code& ec) {
  const auto t = fs::last_write_time(path, ec);
  if (ec) return 0;
  return std::chrono::duration_cast<std::chrono::nanoseconds>(t.time_since_epoch()).count();
}

bool is_temp_name(const std::string& name) {
  return name.rfind(".tmp-", 0) == 0;
}

bool is_entry_name(const std::string& name) {
  return name.size() > entry_suffix.size() &&
         name.compare(name.size() - entry_suffix.size(), entry_suffix.size(), entry_suffix) == 0 &&
         !is_temp_name(name);
}

// Bytes this process has written into each cache folder since it last measured the folder.
// Walking a folder of tens of thousands of entries after every write would cost more than the
// compiles it saves, so the walk happens on a process's first write and then after every
// cap/16 bytes written: the folder overshoots the cap by at most cap/16 per writing process.
std::mutex written_mutex;
std::map<fs::path, std::uint64_t>& written_since_scan() {
  static std::map<fs::path, std::uint64_t> m;
  return m;
}

} // namespace

std::string cache_key(const KeyParts& p) {
  Sha256 h;
  h.part("build");
  h.part(p.build_id);
  h.part("nvrtc");
  h.part(p.nvrtc_identity);
  h.part("headers");
  h.part(p.header_set);
  h.part("argv");
  h.part_u64(p.argv.size());
  for (const auto& a : p.argv)
    h.part(a);
  h.part("file");
  h.part(p.file_name);
  h.part("names");
  h.part_u64(p.name_expressions.size());
  for (const auto& n : p.name_expressions)
    h.part(n);
  h.part("source");
  h.part(p.source);
  return h.hex();
}

std::string build_id() {
  std::string id(compile_schema);
#if defined(KJUDGE_VERSION)
  id += " ";
  id += KJUDGE_VERSION;
#endif
  return id;
}

std::string nvrtc_library_identity() {
  static const std::string identity = [] {
    int major = 0, minor = 0;
    nvrtcVersion(&major, &minor);
    std::string out = fmt::format("nvrtc {}.{}", major, minor);
    Dl_info info{};
    // dladdr wants an object pointer; the cast of a function address is what POSIX means here.
    void* fn = reinterpret_cast<void*>(&nvrtcVersion);
    if (dladdr(fn, &info) != 0 && info.dli_fname != nullptr) {
      std::error_code ec;
      fs::path lib = fs::canonical(info.dli_fname, ec);
      if (ec) lib = info.dli_fname;
      const auto size = fs::file_size(lib, ec);
      const std::int64_t mtime = mtime_ns(lib, ec);
      out += fmt::format(" {} {} {}", lib.string(), ec ? 0 : size, mtime);
    }
    return out;
  }();
  return identity;
}

std::string pinned_header_set_hash(const fs::path& kjudge_include,
                                   const std::vector<fs::path>& toolkit_dirs) {
  static std::mutex mutex;
  static std::map<std::vector<fs::path>, std::string> memo;
  std::vector<fs::path> memo_key{kjudge_include};
  memo_key.insert(memo_key.end(), toolkit_dirs.begin(), toolkit_dirs.end());
  {
    std::lock_guard lock(mutex);
    if (auto it = memo.find(memo_key); it != memo.end()) return it->second;
  }

  // Relative paths of the regular files under `root`, sorted (as strings: comparing paths
  // component by component costs more than the walk), so readdir's order does not matter.
  auto sorted_files = [](const fs::path& root) {
    std::vector<std::string> files;
    const std::size_t prefix = root.native().size() + 1;
    std::error_code ec;
    for (fs::recursive_directory_iterator
             it(root, fs::directory_options::skip_permission_denied, ec),
         end;
         !ec && it != end; it.increment(ec)) {
      if (it->is_regular_file(ec)) files.push_back(it->path().native().substr(prefix));
    }
    std::sort(files.begin(), files.end());
    return files;
  };

  Sha256 h;
  h.part("kjudge");
  if (!kjudge_include.empty()) {
    const fs::path own = kjudge_include / "kjudge";
    h.part(own.string());
    for (const auto& file : sorted_files(own)) {
      h.part(file);
      h.part(read_whole(own / file).value_or("<unreadable>"));
    }
  }
  std::vector<fs::path> walked;
  for (const auto& dir : toolkit_dirs) {
    h.part("toolkit");
    h.part(dir.string());
    // include/cccl lies inside include: its files are already in the walk of the parent.
    const bool nested = std::any_of(walked.begin(), walked.end(), [&](const fs::path& w) {
      const auto rel = dir.lexically_relative(w);
      return !rel.empty() && *rel.begin() != "..";
    });
    walked.push_back(dir);
    if (nested) continue;
    const std::string root = dir.native() + "/";
    for (const auto& file : sorted_files(dir)) {
      // One stat per file: the walk is most of what a process pays for its first key.
      struct stat st {};
      const bool ok = ::stat((root + file).c_str(), &st) == 0;
      h.part(file);
      h.part_u64(ok ? static_cast<std::uint64_t>(st.st_size) : 0);
      h.part_u64(ok ? static_cast<std::uint64_t>(st.st_mtim.tv_sec) : 0);
      h.part_u64(ok ? static_cast<std::uint64_t>(st.st_mtim.tv_nsec) : 0);
    }
  }
  std::string out = h.hex();
  std::lock_guard lock(mutex);
  memo.emplace(std::move(memo_key), out);
  return out;
}

std::string encode_entry(const std::string& key, const CompiledModule& module) {
  std::string payload;
  put_bytes(payload, key);
  put_bytes(payload, std::string_view(module.cubin.data(), module.cubin.size()));
  put_bytes(payload, module.ptx);
  put_bytes(payload, module.log);
  put_u64(payload, module.kernels.size());
  for (const auto& k : module.kernels) {
    put_bytes(payload, k.expression);
    put_bytes(payload, k.lowered);
    put_bytes(payload, k.demangled);
    put_u64(payload, k.extern_c ? 1 : 0);
    put_u64(payload, k.param_types.size());
    for (const auto& t : k.param_types)
      put_bytes(payload, t);
  }
  Sha256 h;
  h.update(payload.data(), payload.size());
  const auto digest = h.digest();

  std::string out(entry_magic, sizeof entry_magic);
  put_u64(out, payload.size());
  out.append(reinterpret_cast<const char*>(digest.data()), digest.size());
  out += payload;
  return out;
}

std::optional<CompiledModule> decode_entry(std::string_view bytes, const std::string& key) {
  if (bytes.size() < header_bytes) return std::nullopt;
  if (std::memcmp(bytes.data(), entry_magic, sizeof entry_magic) != 0) return std::nullopt;
  Reader header(bytes.substr(sizeof entry_magic, 8));
  const std::uint64_t length = header.u64();
  if (length != bytes.size() - header_bytes) return std::nullopt;
  const std::string_view stored_digest = bytes.substr(sizeof entry_magic + 8, digest_bytes);
  const std::string_view payload = bytes.substr(header_bytes);
  Sha256 h;
  h.update(payload.data(), payload.size());
  const auto digest = h.digest();
  if (digest.size() != digest_bytes ||
      std::memcmp(digest.data(), stored_digest.data(), digest_bytes) != 0)
    return std::nullopt;

  Reader r(payload);
  CompiledModule m;
  if (r.bytes() != key) return std::nullopt;
  const std::string_view cubin = r.bytes();
  m.cubin.assign(cubin.begin(), cubin.end());
  m.ptx = r.bytes();
  m.log = r.bytes();
  const std::uint64_t kernels = r.count();
  for (std::uint64_t i = 0; r.ok() && i < kernels; ++i) {
    KernelSymbol k;
    k.expression = r.bytes();
    k.lowered = r.bytes();
    k.demangled = r.bytes();
    k.extern_c = r.u64() != 0;
    const std::uint64_t params = r.count();
    for (std::uint64_t j = 0; r.ok() && j < params; ++j)
      k.param_types.emplace_back(r.bytes());
    m.kernels.push_back(std::move(k));
  }
  if (!r.ok() || !r.at_end()) return std::nullopt;
  m.cache_key = key;
  m.from_cache = true;
  return m;
}

fs::path entry_path(const fs::path& dir, const std::string& key) {
  return dir / (key + std::string(entry_suffix));
}

std::optional<CompiledModule> load(const fs::path& dir, const std::string& key) {
  const fs::path path = entry_path(dir, key);
  std::optional<std::string> bytes = read_whole(path);
  if (!bytes) return std::nullopt;
  std::optional<CompiledModule> m = decode_entry(*bytes, key);
  std::error_code ec;
  if (!m) {
    // Never trusted, and removed so that it is not read again before the recompile replaces
    // it. A concurrent writer's rename may have replaced it already; removing that good entry
    // only costs one more compile.
    fs::remove(path, ec);
    return std::nullopt;
  }
  fs::last_write_time(path, fs::file_time_type::clock::now(), ec);
  return m;
}

bool store(const fs::path& dir, const std::string& key, const CompiledModule& module,
           std::uint64_t cap_bytes) {
  std::error_code ec;
  // A folder kjudge creates is private: entries hold code that will run on the GPU, and the
  // checksum detects accidents, not an attacker who can write there.
  if (fs::create_directories(dir, ec) && !ec)
    fs::permissions(dir, fs::perms::owner_all, fs::perm_options::replace, ec);
  if (!fs::is_directory(dir, ec)) return false;
  const std::string bytes = encode_entry(key, module);

  // A name no other writer can pick: pid, a per-process counter and a random word.
  static std::atomic<std::uint64_t> counter{0};
  static const std::uint64_t salt = std::random_device{}();
  const fs::path temp =
      dir / fmt::format(".tmp-{}-{}-{}-{:x}", key.substr(0, 16), ::getpid(), counter++, salt);
  {
    std::ofstream out(temp, std::ios::binary | std::ios::trunc);
    out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
    out.close();
    if (!out) {
      fs::remove(temp, ec);
      return false;
    }
  }
  // No fsync: after a crash the rename may outlive the data, but the checksum then rejects
  // the entry on its next read.
  fs::rename(temp, entry_path(dir, key), ec);
  if (ec) {
    fs::remove(temp, ec);
    return false;
  }

  bool scan = false;
  {
    std::lock_guard lock(written_mutex);
    auto [it, first] = written_since_scan().try_emplace(dir, 0);
    it->second += bytes.size();
    if (first || it->second > cap_bytes / 16) {
      it->second = 0;
      scan = true;
    }
  }
  if (scan) {
    try {
      // Down to 90% of the cap, so that the next few writes do not each trigger a deletion.
      const std::uint64_t total = evict(dir, cap_bytes, key);
      if (total > cap_bytes) evict(dir, cap_bytes - cap_bytes / 10, key);
    } catch (const std::exception&) {
      // Eviction is housekeeping; a failure costs disk space, not a verdict.
    }
  }
  return true;
}

std::uint64_t evict(const fs::path& dir, std::uint64_t target_bytes, const std::string& keep_key) {
  struct Entry {
    std::int64_t mtime;
    std::string name;
    std::uint64_t size;
  };
  std::vector<Entry> entries;
  std::uint64_t total = 0;
  const std::int64_t now = std::chrono::duration_cast<std::chrono::nanoseconds>(
                               fs::file_time_type::clock::now().time_since_epoch())
                               .count();
  constexpr std::int64_t stale_temp_ns = 3600LL * 1000000000LL;
  std::error_code ec;
  for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
    std::error_code entry_ec;
    const std::string name = it->path().filename().string();
    if (!it->is_regular_file(entry_ec)) continue;
    const std::int64_t mtime = mtime_ns(it->path(), entry_ec);
    if (entry_ec) continue; // removed by another process meanwhile
    if (is_temp_name(name)) {
      if (now - mtime > stale_temp_ns) fs::remove(it->path(), entry_ec);
      continue;
    }
    if (!is_entry_name(name)) continue; // not ours: left alone
    const std::uint64_t size = fs::file_size(it->path(), entry_ec);
    if (entry_ec) continue;
    entries.push_back({mtime, name, size});
    total += size;
  }
  if (total <= target_bytes) return total;
  // Oldest first; the name breaks ties so the order does not depend on readdir.
  std::sort(entries.begin(), entries.end(), [](const Entry& a, const Entry& b) {
    return a.mtime != b.mtime ? a.mtime < b.mtime : a.name < b.name;
  });
  const std::string keep_name =
      keep_key.empty() ? std::string() : keep_key + std::string(entry_suffix);
  for (std::size_t i = 0; i < entries.size() && total > target_bytes; ++i) {
    if (entries[i].name == keep_name) continue;
    std::error_code remove_ec;
    fs::remove(dir / entries[i].name, remove_ec);
    total -= entries[i].size; // also when another process removed it first
  }
  return total;
}

} // namespace kj::cuda_cache
