// The on-disk cache of NVRTC results, private to the CUDA backend. An entry is addressed by the
// SHA-256 of everything that can change what NVRTC produces (docs/design.md "The backends"):
// kjudge's compile schema and version, the identity of the NVRTC library, the pinned header set,
// the full option list (architecture included), the program name, the name expressions and the
// source. Entries are written to a temporary file in the cache folder and renamed into place, so a
// reader in another process sees a whole entry or none; each carries a SHA-256 of its payload that
// is checked on every read, so a torn or corrupted entry is recompiled, never trusted (the checksum
// guards against accidents; a folder kjudge creates is private to its user against the rest). The
// folder is capped by size, least recently used first (a hit refreshes the mtime).
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "kjudge/nvrtc.hpp"
#include "kjudge/sha256.hpp"

namespace kj::cuda_cache {

using kj::Sha256;
using kj::sha256_hex;

// What the key is made of. `argv` is the exact option list given to NVRTC (the architecture,
// -std, include paths and the caller's options, in that order): the include folders are there
// by path, and `header_set` adds what they hold.
struct KeyParts {
  std::string build_id;       // compile schema + kjudge version
  std::string nvrtc_identity; // nvrtc_library_identity()
  std::string header_set;     // pinned_header_set_hash()
  std::vector<std::string> argv;
  // Shown in messages, and part of anonymous-namespace mangling, so it changes lowered names.
  std::string file_name;
  std::vector<std::string> name_expressions;
  std::string source;
};
std::string cache_key(const KeyParts& parts);

// The build id of this kjudge: a schema string bumped whenever the compile procedure or the
// entry format changes, plus KJUDGE_VERSION where the build defines it.
std::string build_id();

// The NVRTC library in use: its version and the real path, size and mtime of the shared
// object that holds nvrtcVersion (found with dladdr). The file is ~105 MB, too big to hash in
// every process (~75 ms of SHA-256 alone); a toolkit install or upgrade changes the path or the
// mtime. libnvrtc-builtins, loaded by NVRTC itself, must match its version, so it is covered.
std::string nvrtc_library_identity();

// The pinned header set: every byte of the files under <kjudge_include>/kjudge, and the
// relative path, size and mtime of every file under each toolkit include folder (~2,000 files
// for CUDA 13, ~15 ms once per process; hashing their 28 MB would cost more than a warm check
// may take). Memoised per process and folder list.
std::string pinned_header_set_hash(const std::filesystem::path& kjudge_include,
                                   const std::vector<std::filesystem::path>& toolkit_dirs);

// An entry: magic, payload length, SHA-256 of the payload, payload. The payload holds the key
// (checked against the file name's), CUBIN, PTX, log and the kernel symbols.
std::string encode_entry(const std::string& key, const CompiledModule& module);
// nullopt for anything but a well-formed entry whose checksum and key match.
std::optional<CompiledModule> decode_entry(std::string_view bytes, const std::string& key);

std::filesystem::path entry_path(const std::filesystem::path& dir, const std::string& key);

// A verified entry, or nullopt (missing, torn, corrupt, unreadable). A bad entry is removed so
// the recompile's store replaces it. A hit refreshes the entry's mtime, which orders eviction.
std::optional<CompiledModule> load(const std::filesystem::path& dir, const std::string& key);

// Writes the entry atomically (temporary file in `dir`, then rename), then keeps the folder
// under `cap_bytes`. Never throws: a cache that cannot be written only costs a recompile.
// Returns whether the entry was written.
bool store(const std::filesystem::path& dir, const std::string& key, const CompiledModule& module,
           std::uint64_t cap_bytes);

// Deletes least recently used entries (by mtime) until the entries total at most
// `target_bytes`, never the entry of `keep_key` (the one just written: deleting what the caller
// is about to use would turn every run into a miss); also removes temporary files left by
// writers that died more than an hour ago. Returns the bytes the entries hold afterwards.
std::uint64_t evict(const std::filesystem::path& dir, std::uint64_t target_bytes,
                    const std::string& keep_key = {});

// Suffix of entry files; temporary files start with ".tmp-".
inline constexpr std::string_view entry_suffix = ".kjc";

} // namespace kj::cuda_cache
