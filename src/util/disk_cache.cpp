// The shared machinery of kjudge's on-disk caches (disk_cache.hpp): sealed entries, atomic
// writes, and the size cap, least recently used first.
#include "util/disk_cache.hpp"

#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <bit>
#include <chrono>
#include <cstring>
#include <fstream>
#include <map>
#include <mutex>
#include <random>
#include <sstream>
#include <system_error>
#include <vector>

#include <fmt/format.h>

#include "kjudge/sha256.hpp"

namespace kj::disk_cache {

namespace fs = std::filesystem;

namespace {

constexpr std::size_t magic_bytes = 8;
constexpr std::size_t digest_bytes = 32;
constexpr std::size_t header_bytes = magic_bytes + 8 + digest_bytes;
constexpr std::string_view temp_prefix = ".tmp-";

std::int64_t mtime_ns(const fs::path& path, std::error_code& ec) {
  const auto t = fs::last_write_time(path, ec);
  if (ec) return 0;
  return std::chrono::duration_cast<std::chrono::nanoseconds>(t.time_since_epoch()).count();
}

bool is_temp_name(const std::string& name) { return name.starts_with(temp_prefix); }

bool has_suffix(const std::string& name, std::string_view suffix) {
  return !suffix.empty() && name.size() > suffix.size() && name.ends_with(suffix) &&
         !is_temp_name(name);
}

std::string digest_of(const std::vector<std::string_view>& parts) {
  Sha256 h;
  for (const std::string_view part : parts)
    h.update(part.data(), part.size());
  const auto d = h.digest();
  return std::string(reinterpret_cast<const char*>(d.data()), d.size());
}

// Bytes this process has written into each cache folder since it last measured the folder.
// Walking a folder of tens of thousands of entries after every write would cost more than the
// work it saves, so the walk happens on a process's first write and then after every cap/16
// bytes written: the folder overshoots the cap by at most cap/16 per writing process.
std::mutex written_mutex;
std::map<fs::path, std::uint64_t>& written_since_scan() {
  static std::map<fs::path, std::uint64_t> m;
  return m;
}

} // namespace

std::size_t sealed_header_bytes() { return header_bytes; }

std::string sealed_header(const Format& format, const std::vector<std::string_view>& parts) {
  std::string out(format.magic);
  PayloadWriter length;
  std::uint64_t bytes = 0;
  for (const std::string_view part : parts)
    bytes += part.size();
  length.u64(bytes);
  out += length.out();
  out += digest_of(parts);
  return out;
}

std::string seal(const Format& format, std::string_view payload) {
  std::string out = sealed_header(format, {payload});
  out.append(payload);
  return out;
}

std::optional<std::string_view> unseal(const Format& format, std::string_view bytes) {
  if (format.magic.size() != magic_bytes || bytes.size() < header_bytes ||
      bytes.substr(0, magic_bytes) != format.magic)
    return std::nullopt;
  PayloadReader header(bytes.substr(magic_bytes, 8));
  if (header.u64() != bytes.size() - header_bytes) return std::nullopt;
  const std::string_view payload = bytes.substr(header_bytes);
  if (digest_of({payload}) != bytes.substr(magic_bytes + 8, digest_bytes)) return std::nullopt;
  return payload;
}

void PayloadWriter::u64(std::uint64_t v) {
  for (int i = 0; i < 8; ++i)
    out_ += static_cast<char>((v >> (8 * i)) & 0xff);
}

void PayloadWriter::f64(double v) { u64(std::bit_cast<std::uint64_t>(v)); }

void PayloadWriter::bytes(std::string_view b) { raw(b.data(), b.size()); }

void PayloadWriter::raw(const void* data, std::size_t n) {
  u64(n);
  out_.append(static_cast<const char*>(data), n);
}

std::uint64_t PayloadReader::fail() {
  ok_ = false;
  return 0;
}

std::uint64_t PayloadReader::u64() {
  if (!ok_ || bytes_.size() - pos_ < 8) return fail();
  std::uint64_t v = 0;
  for (int i = 0; i < 8; ++i)
    v |= static_cast<std::uint64_t>(static_cast<unsigned char>(bytes_[pos_ + i])) << (8 * i);
  pos_ += 8;
  return v;
}

double PayloadReader::f64() { return std::bit_cast<double>(u64()); }

std::string_view PayloadReader::bytes() {
  const std::uint64_t n = u64();
  if (!ok_ || bytes_.size() - pos_ < n) {
    fail();
    return {};
  }
  std::string_view out = bytes_.substr(pos_, n);
  pos_ += n;
  return out;
}

std::uint64_t PayloadReader::count() {
  const std::uint64_t n = u64();
  if (ok_ && n > (bytes_.size() - pos_) / 8) return fail();
  return n;
}

fs::path entry_path(const fs::path& dir, const std::string& key, const Format& format) {
  return dir / (key + std::string(format.suffix));
}

std::optional<std::string> read_whole(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return std::nullopt;
  std::ostringstream buffer;
  buffer << in.rdbuf();
  if (in.bad()) return std::nullopt;
  return std::move(buffer).str();
}

void touch(const fs::path& path) {
  std::error_code ec;
  fs::last_write_time(path, fs::file_time_type::clock::now(), ec);
}

bool store(const fs::path& dir, const std::string& key, const Format& format,
           const std::vector<std::string_view>& payload_parts, std::uint64_t cap_bytes) {
  std::error_code ec;
  // A folder kjudge creates is private: entries hold code that will run on the GPU and the
  // oracle's expected outputs, and the checksum detects accidents, not an attacker who can
  // write there.
  if (fs::create_directories(dir, ec) && !ec)
    fs::permissions(dir, fs::perms::owner_all, fs::perm_options::replace, ec);
  if (!fs::is_directory(dir, ec)) return false;

  // A name no other writer can pick: pid, a per-process counter and a random word.
  static std::atomic<std::uint64_t> counter{0};
  static const std::uint64_t salt = std::random_device{}();
  const fs::path temp = dir / fmt::format("{}{}-{}-{}-{:x}", temp_prefix, key.substr(0, 16),
                                          ::getpid(), counter++, salt);
  const std::string header = sealed_header(format, payload_parts);
  std::uint64_t written = header.size();
  {
    std::ofstream out(temp, std::ios::binary | std::ios::trunc);
    out.write(header.data(), static_cast<std::streamsize>(header.size()));
    for (const std::string_view part : payload_parts) {
      out.write(part.data(), static_cast<std::streamsize>(part.size()));
      written += part.size();
    }
    out.close();
    if (!out) {
      fs::remove(temp, ec);
      return false;
    }
  }
  // No fsync: after a crash the rename may outlive the data, but the checksum then rejects
  // the entry on its next read.
  fs::rename(temp, entry_path(dir, key, format), ec);
  if (ec) {
    fs::remove(temp, ec);
    return false;
  }

  bool scan = false;
  {
    std::lock_guard lock(written_mutex);
    auto [it, first] = written_since_scan().try_emplace(dir, 0);
    it->second += written;
    if (first || it->second > cap_bytes / 16) {
      it->second = 0;
      scan = true;
    }
  }
  if (scan) {
    try {
      // Down to 90% of the cap, so that the next few writes do not each trigger a deletion.
      const std::uint64_t total = evict(dir, cap_bytes, format, key);
      if (total > cap_bytes) evict(dir, cap_bytes - cap_bytes / 10, format, key);
    } catch (const std::exception&) {
      // Eviction is housekeeping; a failure costs disk space, not a verdict.
    }
  }
  return true;
}

std::uint64_t evict(const fs::path& dir, std::uint64_t target_bytes, const Format& format,
                    const std::string& keep_key) {
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
    if (!has_suffix(name, format.suffix)) continue; // not ours: left alone
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
      keep_key.empty() ? std::string() : keep_key + std::string(format.suffix);
  for (std::size_t i = 0; i < entries.size() && total > target_bytes; ++i) {
    if (entries[i].name == keep_name) continue;
    std::error_code remove_ec;
    fs::remove(dir / entries[i].name, remove_ec);
    total -= entries[i].size; // also when another process removed it first
  }
  return total;
}

FolderStats folder_stats(const fs::path& dir, std::string_view suffix,
                         std::string_view other_suffix) {
  FolderStats s;
  std::error_code ec;
  for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
    std::error_code entry_ec;
    if (!it->is_regular_file(entry_ec)) continue;
    const std::string name = it->path().filename().string();
    if (has_suffix(name, suffix)) {
      const std::uint64_t size = fs::file_size(it->path(), entry_ec);
      if (entry_ec) continue;
      ++s.entries;
      s.bytes += size;
    } else if (is_temp_name(name) || has_suffix(name, other_suffix)) {
      ++s.others;
    }
  }
  return s;
}

std::uint64_t clear(const fs::path& dir, std::string_view suffix, std::string_view other_suffix) {
  std::vector<fs::path> doomed;
  std::error_code ec;
  for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
    std::error_code entry_ec;
    if (!it->is_regular_file(entry_ec)) continue;
    const std::string name = it->path().filename().string();
    if (has_suffix(name, suffix) || is_temp_name(name) || has_suffix(name, other_suffix))
      doomed.push_back(it->path());
  }
  std::uint64_t removed = 0;
  for (const fs::path& p : doomed)
    if (fs::remove(p, ec)) ++removed;
  return removed;
}

} // namespace kj::disk_cache
