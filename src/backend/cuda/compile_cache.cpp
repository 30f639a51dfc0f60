// The content-addressed NVRTC cache (see compile_cache.hpp for the contract). What it guards
// against: a stale entry after any change that could alter the CUBIN (the key), a partial entry
// seen by a concurrent reader (rename), a torn or altered entry (checksum, verified on every
// read), and a folder that grows without bound (the size cap, least recently used first); the
// machinery is src/util/disk_cache.hpp's, shared with the oracle's case cache.
#include "backend/cuda/compile_cache.hpp"

#include <dlfcn.h>
#include <nvrtc.h>
#include <sys/stat.h>

#include <algorithm>
#include <chrono>
#include <map>
#include <mutex>
#include <system_error>
#include <utility>

#include <fmt/format.h>

#include "backend/cuda/nvrtc_internal.hpp"
#include "kjudge/error.hpp"
#include "util/disk_cache.hpp"

namespace kj::cuda_cache {

namespace fs = std::filesystem;

namespace {

// Bump when the compile procedure (options kjudge adds, how symbols are read) or the entry
// format changes: old entries then stop matching instead of being misread.
constexpr std::string_view compile_schema = "kjudge-nvrtc-cache-1";

constexpr disk_cache::Format entry_format{std::string_view("KJNVRTC\x01", 8), entry_suffix};

std::int64_t mtime_ns(const fs::path& path, std::error_code& ec) {
  const auto t = fs::last_write_time(path, ec);
  if (ec) return 0;
  return std::chrono::duration_cast<std::chrono::nanoseconds>(t.time_since_epoch()).count();
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
    // The library's own entry point (kjudge's nvrtc* forward to it): dladdr names its file.
    void* fn = detail::nvrtc_library_entry_point();
    if (fn != nullptr && dladdr(fn, &info) != 0 && info.dli_fname != nullptr) {
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
      h.part(disk_cache::read_whole(own / file).value_or("<unreadable>"));
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

namespace {

// The entry's payload: the key (checked against the file name's), CUBIN, PTX, log, symbols.
std::string entry_payload(const std::string& key, const CompiledModule& module) {
  disk_cache::PayloadWriter payload;
  payload.bytes(key);
  payload.raw(module.cubin.data(), module.cubin.size());
  payload.bytes(module.ptx);
  payload.bytes(module.log);
  payload.u64(module.kernels.size());
  for (const auto& k : module.kernels) {
    payload.bytes(k.expression);
    payload.bytes(k.lowered);
    payload.bytes(k.demangled);
    payload.u64(k.extern_c ? 1 : 0);
    payload.u64(k.param_types.size());
    for (const auto& t : k.param_types)
      payload.bytes(t);
  }
  return std::move(payload.out());
}

} // namespace

std::string encode_entry(const std::string& key, const CompiledModule& module) {
  return disk_cache::seal(entry_format, entry_payload(key, module));
}

std::optional<CompiledModule> decode_entry(std::string_view bytes, const std::string& key) {
  const std::optional<std::string_view> payload = disk_cache::unseal(entry_format, bytes);
  if (!payload) return std::nullopt;
  disk_cache::PayloadReader r(*payload);
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
  return disk_cache::entry_path(dir, key, entry_format);
}

std::optional<CompiledModule> load(const fs::path& dir, const std::string& key) {
  const fs::path path = entry_path(dir, key);
  std::optional<std::string> bytes = disk_cache::read_whole(path);
  if (!bytes) return std::nullopt;
  std::optional<CompiledModule> m = decode_entry(*bytes, key);
  if (!m) {
    // Never trusted, and removed so that it is not read again before the recompile replaces
    // it. A concurrent writer's rename may have replaced it already; removing that good entry
    // only costs one more compile.
    std::error_code ec;
    fs::remove(path, ec);
    return std::nullopt;
  }
  disk_cache::touch(path);
  return m;
}

bool store(const fs::path& dir, const std::string& key, const CompiledModule& module,
           std::uint64_t cap_bytes) {
  return disk_cache::store(dir, key, entry_format, {entry_payload(key, module)}, cap_bytes);
}

std::uint64_t evict(const fs::path& dir, std::uint64_t target_bytes, const std::string& keep_key) {
  return disk_cache::evict(dir, target_bytes, entry_format, keep_key);
}

} // namespace kj::cuda_cache
