// The machinery both on-disk caches share (the NVRTC cache of src/backend/cuda/compile_cache.hpp
// and the oracle's case cache of src/judge/case_disk_cache.hpp): a sealed entry (magic, payload
// length, SHA-256 of the payload, payload) checked on every read, an atomic write (temporary file
// in the folder, then rename), and a folder capped by size with least recently used entries (by
// mtime; a hit refreshes it) evicted first. Each cache names its own entry suffix and magic.
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace kj::disk_cache {

// The 8 bytes an entry starts with, and the file-name suffix of its cache's entries.
struct Format {
  std::string_view magic;  // exactly 8 bytes
  std::string_view suffix; // ".kjc"
};

// magic, payload length (u64 little-endian), SHA-256 of the payload, payload.
std::string seal(const Format& format, std::string_view payload);
// What seal puts before a payload made of `parts`, in order.
std::string sealed_header(const Format& format, const std::vector<std::string_view>& parts);
// The payload of a well-formed sealed entry whose checksum matches; nullopt for anything else.
std::optional<std::string_view> unseal(const Format& format, std::string_view bytes);
// The bytes seal adds before the payload.
std::size_t sealed_header_bytes();

// Appends little-endian integers and length-framed byte strings to a payload.
class PayloadWriter {
public:
  void u64(std::uint64_t v);
  void f64(double v); // its bits
  void bytes(std::string_view b);
  void raw(const void* data, std::size_t n); // length first, like bytes()
  std::string& out() { return out_; }

private:
  std::string out_;
};

// Reads a payload back; any overrun marks the whole payload bad (ok() false).
class PayloadReader {
public:
  explicit PayloadReader(std::string_view bytes) : bytes_(bytes) {}
  bool ok() const { return ok_; }
  bool at_end() const { return pos_ == bytes_.size(); }
  std::uint64_t u64();
  double f64();
  std::string_view bytes();
  // A count that cannot exceed what is left (each item takes at least 8 bytes): a corrupt
  // count must not make the decoder reserve gigabytes.
  std::uint64_t count();
  // Marks the payload bad (a decoder's own consistency check failed); returns 0.
  std::uint64_t fail();

private:
  std::string_view bytes_;
  std::size_t pos_ = 0;
  bool ok_ = true;
};

// <dir>/<key><suffix>.
std::filesystem::path entry_path(const std::filesystem::path& dir, const std::string& key,
                                 const Format& format);

// The file's bytes; nullopt when it is missing or unreadable.
std::optional<std::string> read_whole(const std::filesystem::path& path);

// Sets the entry's mtime to now: a hit makes it the most recently used.
void touch(const std::filesystem::path& path);

// Writes the sealed entry of the payload made of `payload_parts` (written one after the other,
// so a payload of gigabytes is never copied whole) under `key` atomically (the folder made
// private to its user where this call creates it), then keeps the folder under `cap_bytes`
// (evict, not on every write: see disk_cache.cpp). Never throws: a cache that cannot be written
// only costs the work again. Returns whether the entry was written.
bool store(const std::filesystem::path& dir, const std::string& key, const Format& format,
           const std::vector<std::string_view>& payload_parts, std::uint64_t cap_bytes);

// Deletes least recently used entries (by mtime) until the entries total at most
// `target_bytes`, never `keep_key`'s (the one just written: deleting what the caller is about to
// use would turn every run into a miss); also removes temporary files left by writers that died
// more than an hour ago. Files that are not the format's entries are left alone. Returns the
// bytes the entries hold afterwards.
std::uint64_t evict(const std::filesystem::path& dir, std::uint64_t target_bytes,
                    const Format& format, const std::string& keep_key = {});

// What a folder holds: its entries of `suffix` and their bytes, the other files kjudge leaves
// there (`other_suffix`'s, e.g. markers; temporary files).
struct FolderStats {
  std::uint64_t entries = 0, bytes = 0, others = 0;
};
FolderStats folder_stats(const std::filesystem::path& dir, std::string_view suffix,
                         std::string_view other_suffix = {});

// Removes every entry of `suffix`, every `other_suffix` file and every temporary file of the
// folder (nothing else); returns how many files went.
std::uint64_t clear(const std::filesystem::path& dir, std::string_view suffix,
                    std::string_view other_suffix = {});

} // namespace kj::disk_cache
