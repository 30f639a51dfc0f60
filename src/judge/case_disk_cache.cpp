// The on-disk tier of the case cache (case_disk_cache.hpp): the case's encoding, its key, the
// folder's entries and markers, and the source that puts the memory tier, the disk tier and the
// oracle in that order.
#include "judge/case_disk_cache.hpp"

#include <dlfcn.h>
#include <sys/stat.h>

#include <algorithm>
#include <atomic>
#include <cctype>
#include <chrono>
#include <cstring>
#include <fstream>
#include <iostream>
#include <system_error>

#include <fmt/format.h>

#include "backend/cuda/compile_cache.hpp"
#include "judge/backend.hpp"
#include "kjudge/cache_folders.hpp"
#include "kjudge/sha256.hpp"
#include "util/disk_cache.hpp"

namespace kj::judge {

namespace fs = std::filesystem;

// Bump when the entry format or what a case holds changes: old entries then stop matching.
constexpr std::string_view case_schema = "kjudge-case-cache-1";
constexpr std::string_view declined_suffix = ".declined";
constexpr disk_cache::Format entry_format{std::string_view("KJCASE\x00\x01", 8), ".kjcase"};

namespace {

using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

// Whether a case made in `make_s` may be read back faster: reading costs at least the checksum
// and the upload of its bytes (about 1 GB/s with SHA-256 in software, the slower part) and a
// millisecond of file work. A case the GPU makes in milliseconds (softmax's 4096 x 4096 in 4 ms,
// 190 MiB) is not written, writing it would cost the first check far more than it saves; only
// one whose making paid a one-time cost may pass (on the H200, 2 of softmax's 48).
bool worth_storing(double make_s, std::uint64_t bytes) {
  return make_s > 1e-3 + static_cast<double>(bytes) / 1e9;
}

void put_shape(disk_cache::PayloadWriter& w, const Shape& shape) {
  w.u64(shape.size());
  for (const std::int64_t d : shape)
    w.u64(static_cast<std::uint64_t>(d));
}

Shape get_shape(disk_cache::PayloadReader& r) {
  Shape shape;
  const std::uint64_t n = r.count();
  for (std::uint64_t k = 0; r.ok() && k < n; ++k)
    shape.push_back(static_cast<std::int64_t>(r.u64()));
  return shape;
}

void put_shapes(disk_cache::PayloadWriter& w, const std::vector<Shape>& shapes) {
  w.u64(shapes.size());
  for (const Shape& s : shapes)
    put_shape(w, s);
}

std::vector<Shape> get_shapes(disk_cache::PayloadReader& r) {
  std::vector<Shape> shapes;
  const std::uint64_t n = r.count();
  for (std::uint64_t k = 0; r.ok() && k < n; ++k)
    shapes.push_back(get_shape(r));
  return shapes;
}

// A default-constructed tensor (the initial values of an output that has none) is kept apart
// from a real one of no elements.
bool is_default(const HostTensor& t) {
  return t.shape().empty() && t.numel() == 0 && t.nbytes() == 0;
}

void put_tensors(disk_cache::PayloadWriter& w, const std::vector<HostTensor>& tensors) {
  w.u64(tensors.size());
  for (const HostTensor& t : tensors) {
    const bool absent = is_default(t);
    w.u64(absent ? 0 : 1);
    if (absent) continue;
    w.bytes(dtype_name(t.dtype()));
    put_shape(w, t.shape());
    w.raw(t.bytes().data(), t.nbytes());
  }
}

std::vector<HostTensor> get_tensors(disk_cache::PayloadReader& r) {
  std::vector<HostTensor> tensors;
  const std::uint64_t n = r.count();
  for (std::uint64_t k = 0; r.ok() && k < n; ++k) {
    if (r.u64() == 0) {
      tensors.emplace_back();
      continue;
    }
    const std::optional<DType> dtype = parse_dtype(r.bytes());
    const Shape shape = get_shape(r);
    const std::string_view bytes = r.bytes();
    if (!r.ok() || !dtype ||
        std::any_of(shape.begin(), shape.end(), [](std::int64_t d) { return d < 0; })) {
      r.fail();
      break;
    }
    // The element count the stored bytes imply must be the shape's before anything is made.
    std::uint64_t numel = 1;
    for (const std::int64_t d : shape)
      if (__builtin_mul_overflow(numel, static_cast<std::uint64_t>(d), &numel)) r.fail();
    if (!r.ok() || bytes.size() / dtype_size(*dtype) != numel ||
        bytes.size() % dtype_size(*dtype) != 0) {
      r.fail();
      break;
    }
    HostTensor t(*dtype, shape);
    if (t.nbytes() != bytes.size()) {
      r.fail();
      break;
    }
    std::memcpy(t.bytes().data(), bytes.data(), bytes.size());
    tensors.push_back(std::move(t));
  }
  return tensors;
}

// The identity of the file that holds this code (an executable or a shared library, found with
// dladdr): its path, size and mtime.
std::string binary_identity() {
  Dl_info info{};
  void* fn = reinterpret_cast<void*>(&binary_identity);
  if (dladdr(fn, &info) == 0 || info.dli_fname == nullptr) return "unknown binary";
  std::error_code ec;
  fs::path path = fs::canonical(fs::path(info.dli_fname), ec);
  if (ec) path = info.dli_fname;
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) return path.string();
  return fmt::format("{} {} {}.{:09}", path.string(), st.st_size, st.st_mtim.tv_sec,
                     st.st_mtim.tv_nsec);
}

// What comes before the case in an entry's payload: its key (checked against the file name's),
// the time the making took, and the case's length (the case's bytes follow, framed as
// PayloadWriter::bytes frames them).
std::string entry_prefix(const std::string& key, double make_s, std::size_t case_bytes) {
  disk_cache::PayloadWriter w;
  w.bytes(key);
  w.f64(make_s);
  w.u64(case_bytes);
  return std::move(w.out());
}

fs::path marker_path(const fs::path& dir, const std::string& key) {
  return dir / (key + std::string(declined_suffix));
}

// One line per process, not per case: the count is in the verdict's manifest.
void report_corrupt_once(const fs::path& dir) {
  static std::atomic<bool> reported{false};
  if (reported.exchange(true)) return;
  std::cerr << "kjudge: the case cache " << dir.string()
            << " held a corrupt entry: it was removed and the case made afresh (each one is "
               "counted in the verdict's case_cache.disk_corrupt)\n";
}

bool same_frame(const CaseData& a, const CaseData& b) {
  return a.env == b.env && a.input_shapes == b.input_shapes && a.output_shapes == b.output_shapes &&
         a.nan_in_inputs == b.nan_in_inputs && a.extreme_in_inputs == b.extreme_in_inputs;
}

} // namespace

std::string encode_case_image(const CaseData& frame, const std::vector<HostTensor>& master,
                              const std::vector<HostTensor>& golden,
                              const std::vector<HostTensor>& reference) {
  disk_cache::PayloadWriter w;
  w.u64(frame.env.size());
  for (const auto& [name, value] : frame.env) {
    w.bytes(name);
    w.u64(static_cast<std::uint64_t>(value));
  }
  put_shapes(w, frame.input_shapes);
  put_shapes(w, frame.output_shapes);
  put_tensors(w, frame.initial);
  put_tensors(w, master);
  put_tensors(w, golden);
  put_tensors(w, reference);
  w.f64(frame.reference_s);
  w.u64((frame.nan_in_inputs ? 1u : 0u) | (frame.extreme_in_inputs ? 2u : 0u));
  return std::move(w.out());
}

std::optional<CaseImage> decode_case_image(std::string_view payload, const Problem& problem) {
  disk_cache::PayloadReader r(payload);
  CaseImage image;
  CaseData& f = image.frame;
  const std::uint64_t names = r.count();
  for (std::uint64_t k = 0; r.ok() && k < names; ++k) {
    std::string name(r.bytes());
    f.env[std::move(name)] = static_cast<std::int64_t>(r.u64());
  }
  f.input_shapes = get_shapes(r);
  f.output_shapes = get_shapes(r);
  f.initial = get_tensors(r);
  image.master = get_tensors(r);
  image.golden = get_tensors(r);
  image.reference = get_tensors(r);
  f.reference_s = r.f64();
  const std::uint64_t flags = r.u64();
  if (!r.ok() || !r.at_end() || flags > 3) return std::nullopt;
  f.nan_in_inputs = (flags & 1) != 0;
  f.extreme_in_inputs = (flags & 2) != 0;

  // The tensors fit the problem: what later steps index by input and output.
  const std::size_t n_in = problem.inputs.size(), n_out = problem.outputs.size();
  if (f.input_shapes.size() != n_in || f.output_shapes.size() != n_out ||
      image.master.size() != n_in || f.initial.size() != n_out ||
      image.reference.size() != n_out || (!image.golden.empty() && image.golden.size() != n_out))
    return std::nullopt;
  for (std::size_t i = 0; i < n_in; ++i)
    if (image.master[i].dtype() != problem.inputs[i].dtype ||
        image.master[i].shape() != f.input_shapes[i])
      return std::nullopt;
  for (std::size_t o = 0; o < n_out; ++o) {
    if (image.reference[o].shape() != f.output_shapes[o] ||
        (!image.golden.empty() && image.golden[o].shape() != f.output_shapes[o]))
      return std::nullopt;
    const HostTensor& init = f.initial[o];
    if (problem.outputs[o].init == InitRule::drawn
            ? init.dtype() != problem.outputs[o].dtype || init.shape() != f.output_shapes[o]
            : !is_default(init))
      return std::nullopt;
  }
  return image;
}

bool drawn_with_secret(const Case& c) {
  // Every case of a drawn set, perturbations included, carries the secret's tag after '@'.
  return c.shapes.hidden && (c.shapes.id.starts_with("drawn") || c.id.find('@') != std::string::npos);
}

std::string case_key(const CaseKeyParts& p, std::string_view case_id) {
  Sha256 h;
  h.part("build");
  h.part(p.build);
  h.part("problem");
  h.part(p.problem_hash);
  h.part("backend");
  h.part(p.backend);
  h.part("identity");
  h.part(p.identity);
  h.part("golden");
  h.part_u64(p.golden ? 1 : 0);
  h.part("disabled");
  h.part_u64(p.defences_disabled.size());
  for (const std::string& d : p.defences_disabled)
    h.part(d);
  h.part("case");
  h.part(case_id);
  return h.hex();
}

std::string case_cache_build_id() {
  static const std::string id =
      fmt::format("{} {} {}", case_schema, cuda_cache::build_id(), binary_identity());
  return id;
}

CaseDiskCache::Read CaseDiskCache::read(const std::string& key) const {
  Read out;
  std::error_code ec;
  if (fs::exists(marker_path(dir_, key), ec)) {
    out.found = Found::declined;
    return out;
  }
  const fs::path path = disk_cache::entry_path(dir_, key, entry_format);
  std::optional<std::string> file = disk_cache::read_whole(path);
  if (!file) return out;
  out.file = std::move(*file);
  const std::optional<std::string_view> sealed = disk_cache::unseal(entry_format, out.file);
  std::optional<std::string_view> payload;
  if (sealed) {
    disk_cache::PayloadReader r(*sealed);
    const bool key_matches = r.bytes() == key;
    out.make_s = r.f64();
    payload = r.bytes();
    if (!key_matches || !r.ok() || !r.at_end()) payload.reset();
  }
  if (!payload) {
    remove_corrupt(key);
    out.file.clear();
    out.found = Found::corrupt;
    return out;
  }
  out.payload_at = static_cast<std::size_t>(payload->data() - out.file.data());
  out.payload_bytes = payload->size();
  out.found = Found::entry;
  disk_cache::touch(path);
  return out;
}

bool CaseDiskCache::store(const std::string& key, double make_s,
                          std::string_view payload) const {
  std::error_code ec;
  if (fs::exists(marker_path(dir_, key), ec)) return false;
  const std::string prefix = entry_prefix(key, make_s, payload.size());
  return disk_cache::store(dir_, key, entry_format, {prefix, payload}, cap_bytes_);
}

void CaseDiskCache::decline(const std::string& key) const {
  std::error_code ec;
  fs::remove(disk_cache::entry_path(dir_, key, entry_format), ec);
  std::ofstream(marker_path(dir_, key)) << "reading this case took longer than making it\n";
}

void CaseDiskCache::remove_corrupt(const std::string& key) const {
  std::error_code ec;
  fs::remove(disk_cache::entry_path(dir_, key, entry_format), ec);
  report_corrupt_once(dir_);
}

CaseSource::CaseSource(CaseCache* memory, std::string memory_prefix,
                       std::unique_ptr<CaseDiskCache> disk, CaseKeyParts key_parts,
                       const Problem& problem)
    : memory_(memory), memory_prefix_(std::move(memory_prefix)), disk_(std::move(disk)),
      key_parts_(std::move(key_parts)), problem_(problem) {}

void CaseSource::forget_memory() {
  if (memory_) memory_->clear();
}

std::shared_ptr<const CaseData> CaseSource::read_from_disk(const Case& c, const std::string& key,
                                                           CheckBackend& backend) {
  const auto start = Clock::now();
  CaseDiskCache::Read read = disk_->read(key);
  if (read.found == CaseDiskCache::Found::corrupt) ++counts_.disk_corrupt;
  if (read.found != CaseDiskCache::Found::entry) return nullptr;
  std::optional<CaseImage> image = decode_case_image(read.payload(), problem_);
  // A sealed entry that does not describe this case is as corrupt as a torn one.
  if (image && !same_frame(image->frame, case_frame(problem_, c))) image.reset();
  const double make_s = read.make_s;
  std::optional<CaseData> decoded;
  if (image) {
    read = {}; // the file's bytes go before the upload
    decoded = backend.decode_case(std::move(*image));
  }
  if (!decoded) {
    disk_->remove_corrupt(key);
    ++counts_.disk_corrupt;
    return nullptr;
  }
  ++counts_.disk_hits;
  // Reading (file, checksum, decoding, upload) must beat making, or the entry only costs.
  if (seconds_since(start) > make_s) {
    disk_->decline(key);
    ++counts_.disk_declined;
  }
  return std::make_shared<const CaseData>(std::move(*decoded));
}

std::shared_ptr<const CaseData> CaseSource::case_data(const Case& c, CheckBackend& backend,
                                                      const std::function<CaseData()>& make) {
  const std::string memory_key = memory_prefix_ + c.id;
  if (memory_)
    if (auto hit = memory_->find(memory_key)) {
      ++counts_.hits;
      return hit;
    }
  // A miss is this check's claim on the entry (other judges of the device wait for it): it ends
  // with the entry kept, or abandoned when the making throws.
  bool claimed = memory_ != nullptr;
  auto keep_in_memory = [&](const std::shared_ptr<const CaseData>& data) {
    if (memory_) memory_->insert(memory_key, data, data->resident_bytes());
    claimed = false;
  };
  struct Abandon {
    CaseCache* memory;
    const std::string& key;
    const bool& claimed;
    ~Abandon() {
      if (claimed) memory->abandon(key);
    }
  } abandon_unless_kept{memory_, memory_key, claimed};
  const bool on_disk = disk_ && !drawn_with_secret(c);
  const std::string key = on_disk ? case_key(key_parts_, c.id) : std::string();
  if (on_disk)
    if (auto stored = read_from_disk(c, key, backend)) {
      keep_in_memory(stored);
      return stored;
    }
  const auto start = Clock::now();
  auto made = std::make_shared<const CaseData>(make());
  const double make_s = seconds_since(start);
  ++counts_.misses;
  keep_in_memory(made);
  // Its resident bytes stand for the entry's (at most twice them: host and device copies).
  if (on_disk && worth_storing(make_s, made->resident_bytes()))
    if (const std::optional<std::string> bytes = backend.encode_case(*made))
      if (disk_->store(key, make_s, *bytes)) ++counts_.disk_stored;
  return made;
}

} // namespace kj::judge

namespace kj {

namespace fs = std::filesystem;

using judge::declined_suffix;
using judge::entry_format;

CacheFolderFacts case_cache_facts(const fs::path& dir) {
  CacheFolderFacts facts;
  facts.dir = dir;
  std::error_code ec;
  facts.exists = fs::is_directory(dir, ec);
  const disk_cache::FolderStats folder =
      disk_cache::folder_stats(dir, entry_format.suffix, declined_suffix);
  facts.entries = folder.entries;
  facts.bytes = folder.bytes;
  std::vector<std::pair<fs::file_time_type, CacheEntryFacts>> entries;
  for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
    const std::string name = it->path().filename().string();
    std::error_code entry_ec;
    if (name.starts_with(".") || !it->is_regular_file(entry_ec)) continue;
    if (name.ends_with(declined_suffix)) {
      ++facts.declined;
      continue;
    }
    if (!name.ends_with(entry_format.suffix)) continue;
    CacheEntryFacts e;
    e.key = name.substr(0, name.size() - entry_format.suffix.size());
    e.bytes = fs::file_size(it->path(), entry_ec);
    // The header alone, not verified: the seal, then the key and the making's time.
    std::string head(disk_cache::sealed_header_bytes() + 8 + e.key.size() + 8, '\0');
    std::ifstream in(it->path(), std::ios::binary);
    in.read(head.data(), static_cast<std::streamsize>(head.size()));
    if (in.gcount() == static_cast<std::streamsize>(head.size())) {
      disk_cache::PayloadReader r(std::string_view(head).substr(disk_cache::sealed_header_bytes()));
      r.bytes();
      e.make_s = r.f64();
    }
    entries.emplace_back(fs::last_write_time(it->path(), entry_ec), std::move(e));
  }
  std::sort(entries.begin(), entries.end(), [](const auto& a, const auto& b) {
    return a.first != b.first ? a.first > b.first : a.second.key < b.second.key;
  });
  for (auto& entry : entries)
    facts.per_entry.push_back(std::move(entry.second));
  return facts;
}

std::uint64_t clear_case_cache(const fs::path& dir) {
  return disk_cache::clear(dir, entry_format.suffix, declined_suffix);
}

CacheFolderFacts nvrtc_cache_facts(const fs::path& dir) {
  CacheFolderFacts facts;
  facts.dir = dir;
  std::error_code ec;
  facts.exists = fs::is_directory(dir, ec);
  const disk_cache::FolderStats folder = disk_cache::folder_stats(dir, cuda_cache::entry_suffix);
  facts.entries = folder.entries;
  facts.bytes = folder.bytes;
  return facts;
}

std::uint64_t clear_nvrtc_cache(const fs::path& dir) {
  return disk_cache::clear(dir, cuda_cache::entry_suffix);
}

namespace {

// A build cache entry's folder name: 64 hexadecimal digits.
bool is_build_key(const std::string& name) {
  return name.size() == 64 &&
         std::all_of(name.begin(), name.end(), [](char c) { return std::isxdigit(c) != 0; });
}

} // namespace

CacheFolderFacts kernelbench_build_facts(const fs::path& dir) {
  CacheFolderFacts facts;
  facts.dir = dir;
  std::error_code ec;
  facts.exists = fs::is_directory(dir, ec);
  for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
    std::error_code entry_ec;
    if (!is_build_key(it->path().filename().string()) || it->is_symlink(entry_ec) ||
        !fs::is_regular_file(it->path() / "build.json", entry_ec))
      continue;
    ++facts.entries;
    // Files below too (torch's precompiled header is include/torch/extension.h.gch), never
    // through a link.
    for (const auto& file : fs::recursive_directory_iterator(it->path(), entry_ec))
      if (fs::is_regular_file(file.symlink_status(entry_ec))) facts.bytes += file.file_size(entry_ec);
  }
  return facts;
}

std::uint64_t clear_kernelbench_builds(const fs::path& dir) {
  std::uint64_t removed = 0;
  std::error_code ec;
  std::vector<fs::path> doomed;
  for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
    const std::string name = it->path().filename().string();
    std::error_code entry_ec;
    if (it->is_symlink(entry_ec) || !it->is_directory(entry_ec)) continue;
    if (name.starts_with(".entry-") ||
        (is_build_key(name) && fs::is_regular_file(it->path() / "build.json", entry_ec)))
      doomed.push_back(it->path());
  }
  for (const fs::path& p : doomed)
    if (fs::remove_all(p, ec) > 0 && !ec) ++removed;
  return removed;
}

} // namespace kj
