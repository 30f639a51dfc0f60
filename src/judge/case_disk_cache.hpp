// The on-disk tier of the oracle's case cache (CheckOptions::case_cache_dir), shared by `check`,
// `bench` and `serve`: a case's inputs, golden and reference as a content-addressed entry, so a
// later process judging the same problem reads a case instead of making it. Where reading (file
// and upload) takes longer than the making did, the entry is replaced by a marker and the case
// is not stored again by this build. Hidden cases drawn with a secret are never stored.
#pragma once

#include <cstdint>
#include <filesystem>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "judge/case_cache.hpp"
#include "judge/case_oracle.hpp"

namespace kj::judge {

class CheckBackend;

// Everything CaseData holds that a check reads after the oracle made it, with its tensors on
// the host: the frame (env, shapes, flags), the master inputs, the in-out outputs' initial
// values, the golden (in the plan's dtypes: f64 for float outputs where a backend keeps it so)
// and the reference, and the reference's wall time. Not the bench's timings (reference_cpu_ms,
// reference_ms, baseline_*): a timed run never uses a stored case.
struct CaseImage {
  CaseData frame; // env, shapes, initial, reference_s, flags; no other tensor
  std::vector<HostTensor> master, golden, reference;
};
// The payload of a case: `frame`'s fields and the three lists of tensors, in order.
std::string encode_case_image(const CaseData& frame, const std::vector<HostTensor>& master,
                              const std::vector<HostTensor>& golden,
                              const std::vector<HostTensor>& reference);
// The case back, checked against `problem` (one master per input in its dtype and shape, one
// reference per output in its shape, a golden per output or none); nullopt for anything else.
std::optional<CaseImage> decode_case_image(std::string_view payload, const Problem& problem);

// Whether `c` is a hidden case drawn with a secret ("drawn<range>.<draw>@<tag>" and the
// perturbations of such a set): never written to disk, where the secret's draws would outlive it.
bool drawn_with_secret(const Case& c);

// What a case's key is made of, but the case id: kjudge's build, the problem, the backend and
// what of the machine decides the oracle's results (backend_identity), whether the golden is
// made, and the defences turned off by test switches.
struct CaseKeyParts {
  std::string build;       // case_cache_build_id()
  std::string problem_hash;
  std::string backend;     // "cuda" | "host"
  std::string identity;    // CheckBackend::case_identity()
  bool golden = true;
  std::vector<std::string> defences_disabled;
};
// The hex SHA-256 that names case `case_id`'s entry.
std::string case_key(const CaseKeyParts& parts, std::string_view case_id);

// The entry format's schema, cuda_cache::build_id() (kjudge's version) and the identity (path,
// size, mtime) of the binary that holds this code: a rebuilt kjudge, whose generator or oracle
// may make other bytes, does not read its predecessor's cases.
std::string case_cache_build_id();

// One folder of entries. Every call is safe against other processes using the same folder.
class CaseDiskCache {
public:
  CaseDiskCache(std::filesystem::path dir, std::uint64_t cap_bytes)
      : dir_(std::move(dir)), cap_bytes_(cap_bytes) {}

  enum class Found { missing, corrupt, declined, entry };
  struct Read {
    Found found = Found::missing;
    std::string file;         // the whole entry (Found::entry)
    std::size_t payload_at = 0, payload_bytes = 0; // the case's bytes in `file`
    double make_s = 0;        // the recorded time of the making
    std::string_view payload() const {
      return std::string_view(file).substr(payload_at, payload_bytes);
    }
  };
  // The entry under `key`, verified: a corrupt or truncated one is removed (Found::corrupt, and
  // one line on standard error per process), a marker says Found::declined. A hit refreshes the
  // entry's mtime, which orders eviction.
  Read read(const std::string& key) const;
  // Writes the entry (payload and the time its making took) unless a marker declines it; keeps
  // the folder under the cap. Returns whether it was written.
  bool store(const std::string& key, double make_s, std::string_view payload) const;
  // Removes the entry and leaves the marker: this case is not stored again by this build.
  void decline(const std::string& key) const;
  // Removes a corrupt entry (say, one whose payload does not decode though its checksum
  // held), with read's line on standard error.
  void remove_corrupt(const std::string& key) const;

  const std::filesystem::path& dir() const { return dir_; }

private:
  std::filesystem::path dir_;
  std::uint64_t cap_bytes_;
};

// What one check's cases came from (the verdict's manifest `case_cache`).
struct CaseSourceCounts {
  std::uint64_t hits = 0;          // from memory (serve's CaseCache)
  std::uint64_t misses = 0;        // made by the oracle
  std::uint64_t disk_hits = 0;     // read from disk
  std::uint64_t disk_stored = 0;   // written to disk
  std::uint64_t disk_corrupt = 0;  // entries found corrupt, removed, the case made afresh
  std::uint64_t disk_declined = 0; // entries whose read was slower than the making: removed
};

// The two tiers in front of the oracle: memory (`memory`, null: none) under `memory_prefix` +
// the case id, then disk (null: none) under case_key(key_parts, case id), then the making.
class CaseSource {
public:
  CaseSource(CaseCache* memory, std::string memory_prefix, std::unique_ptr<CaseDiskCache> disk,
             CaseKeyParts key_parts, const Problem& problem);
  // Case `c`'s data, from a tier or `make` (then kept where allowed); `backend` encodes and
  // decodes it for the disk.
  std::shared_ptr<const CaseData> case_data(const Case& c, CheckBackend& backend,
                                            const std::function<CaseData()>& make);
  // After a fault in the oracle (its CUDA context may be lost): the memory tier dropped.
  void forget_memory();
  const CaseSourceCounts& counts() const { return counts_; }
  CaseCache* memory() const { return memory_; }

private:
  std::shared_ptr<const CaseData> read_from_disk(const Case& c, const std::string& key,
                                                 CheckBackend& backend);
  CaseCache* memory_;
  std::string memory_prefix_;
  std::unique_ptr<CaseDiskCache> disk_;
  CaseKeyParts key_parts_;
  const Problem& problem_;
  CaseSourceCounts counts_;
};

} // namespace kj::judge
