// HostModule (kjudge/host_backend.hpp): a host build's shared object checked to hold no code
// that runs when it is loaded (no initialisers, finalisers or ifunc resolvers in its ELF), loaded
// with dlopen and called through its kjudge entry points; and a shadow finding's addresses placed
// in the candidate's source with addr2line.
#include <dlfcn.h>
#include <elf.h>
#include <unistd.h>

#include <fmt/format.h>

#include <algorithm>
#include <cstring>
#include <sstream>

#include "backend/host/host_tools.hpp"
#include "kjudge/host_backend.hpp"
#include "kjudge/nvrtc.hpp"
#include "util/private_folder.hpp"

namespace kj {

namespace fs = std::filesystem;
using detail::read_file;
using detail::run;

namespace {

// The ELF file's i-th program header (load_time_code checked that they lie inside it).
const Elf64_Phdr* program_header(const std::string& file, int i) {
  const auto* eh = reinterpret_cast<const Elf64_Ehdr*>(file.data());
  return reinterpret_cast<const Elf64_Phdr*>(file.data() + eh->e_phoff +
                                             static_cast<std::size_t>(i) * eh->e_phentsize);
}

// The ELF file's bytes at virtual address `at` (through its PT_LOAD segments), or nullptr.
const std::byte* at_address(const std::string& file, std::uint64_t at, std::uint64_t size) {
  const auto* eh = reinterpret_cast<const Elf64_Ehdr*>(file.data());
  for (int i = 0; i < eh->e_phnum; ++i) {
    const Elf64_Phdr* ph = program_header(file, i);
    if (ph->p_type == PT_LOAD && at >= ph->p_vaddr && at + size <= ph->p_vaddr + ph->p_filesz &&
        ph->p_offset + (at - ph->p_vaddr) + size <= file.size())
      return reinterpret_cast<const std::byte*>(file.data() + ph->p_offset + (at - ph->p_vaddr));
  }
  return nullptr;
}

} // namespace

std::string load_time_code(const fs::path& shared_object) {
  const std::string file = read_file(shared_object);
  if (file.size() < sizeof(Elf64_Ehdr) || std::memcmp(file.data(), ELFMAG, SELFMAG) != 0 ||
      file[EI_CLASS] != ELFCLASS64)
    return "it is not a 64-bit ELF file";
  const auto* eh = reinterpret_cast<const Elf64_Ehdr*>(file.data());
  if (eh->e_phoff + static_cast<std::uint64_t>(eh->e_phnum) * eh->e_phentsize > file.size() ||
      eh->e_shoff + static_cast<std::uint64_t>(eh->e_shnum) * eh->e_shentsize > file.size())
    return "its headers lie outside the file";
  // The dynamic section: what the loader runs.
  std::uint64_t rela = 0, rela_size = 0, jmprel = 0, jmprel_size = 0;
  for (int i = 0; i < eh->e_phnum; ++i) {
    const Elf64_Phdr* ph = program_header(file, i);
    if (ph->p_type != PT_DYNAMIC) continue;
    if (ph->p_offset + ph->p_filesz > file.size()) return "its dynamic section lies outside it";
    const auto* dyn = reinterpret_cast<const Elf64_Dyn*>(file.data() + ph->p_offset);
    for (std::size_t k = 0; k < ph->p_filesz / sizeof(Elf64_Dyn) && dyn[k].d_tag != DT_NULL; ++k) {
      const auto v = dyn[k].d_un.d_val;
      switch (dyn[k].d_tag) {
      case DT_INIT: return "an initialisation function (DT_INIT)";
      case DT_FINI: return "a finalisation function (DT_FINI)";
      case DT_INIT_ARRAYSZ:
        if (v) return "static constructors or dynamically initialised objects (.init_array)";
        break;
      case DT_PREINIT_ARRAYSZ:
        if (v) return "a pre-initialisation array (.preinit_array)";
        break;
      case DT_FINI_ARRAYSZ:
        if (v) return "static destructors (.fini_array)";
        break;
      case DT_RELA: rela = v; break;
      case DT_RELASZ: rela_size = v; break;
      case DT_JMPREL: jmprel = v; break;
      case DT_PLTRELSZ: jmprel_size = v; break;
      default: break;
      }
    }
  }
  for (const auto& [start, size] : {std::pair{rela, rela_size}, std::pair{jmprel, jmprel_size}}) {
    if (size == 0) continue;
    const auto* r = reinterpret_cast<const Elf64_Rela*>(at_address(file, start, size));
    if (!r) return "its relocations lie outside it";
    for (std::size_t k = 0; k < size / sizeof(Elf64_Rela); ++k)
      if (ELF64_R_TYPE(r[k].r_info) == R_X86_64_IRELATIVE) return "an ifunc resolver";
  }
  // An exported ifunc runs its resolver when a jump slot is bound, also at load (RTLD_NOW).
  for (int i = 0; i < eh->e_shnum; ++i) {
    const auto* sh = reinterpret_cast<const Elf64_Shdr*>(file.data() + eh->e_shoff +
                                                         static_cast<std::size_t>(i) * eh->e_shentsize);
    if (sh->sh_type != SHT_DYNSYM && sh->sh_type != SHT_SYMTAB) continue;
    if (sh->sh_offset + sh->sh_size > file.size()) return "its symbols lie outside it";
    const auto* sym = reinterpret_cast<const Elf64_Sym*>(file.data() + sh->sh_offset);
    for (std::size_t k = 0; k < sh->sh_size / sizeof(Elf64_Sym); ++k)
      if (ELF64_ST_TYPE(sym[k].st_info) == STT_GNU_IFUNC && sym[k].st_shndx != SHN_UNDEF)
        return "an ifunc resolver";
  }
  return "";
}

HostModule::HostModule(const fs::path& shared_object) {
  handle_ = ::dlopen(shared_object.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!handle_)
    throw CompileError(fmt::format("cannot load {}: {}", shared_object.string(), ::dlerror()), "");
  count_ = reinterpret_cast<int (*)()>(::dlsym(handle_, "kj_host_kernel_count"));
  launch_ = reinterpret_cast<decltype(launch_)>(::dlsym(handle_, "kj_host_launch"));
  track_ = reinterpret_cast<decltype(track_)>(::dlsym(handle_, "kj_host_track"));
  cpu_ns_ = reinterpret_cast<decltype(cpu_ns_)>(::dlsym(handle_, "kj_host_last_launch_cpu_ns"));
  coverage_ = reinterpret_cast<decltype(coverage_)>(::dlsym(handle_, "kj_host_coverage"));
  if (!count_ || !launch_ || !cpu_ns_) {
    ::dlclose(handle_);
    handle_ = nullptr;
    throw CompileError(fmt::format("{} has no kjudge entry points", shared_object.string()), "");
  }
}

HostModule::~HostModule() {
  if (!handle_) return;
  // The destructors the module's statics registered, while its code is still mapped.
  if (auto finalize = reinterpret_cast<void (*)()>(::dlsym(handle_, "kj_host_finalize")))
    finalize();
  ::dlclose(handle_);
}

int HostModule::kernel_count() const { return count_(); }

double HostModule::last_launch_cpu_ms() const { return static_cast<double>(cpu_ns_()) / 1e6; }

std::optional<std::vector<std::byte>> HostModule::coverage(std::size_t capacity) const {
  if (!coverage_) return std::nullopt;
  std::vector<std::byte> out(capacity);
  const unsigned long used = coverage_(reinterpret_cast<unsigned char*>(out.data()), capacity);
  if (used > capacity) return std::nullopt;
  out.resize(used);
  return out;
}

namespace {

// kj_host_launch's record of a failed assertion (src/backend/host/rewrite.cpp): "kjudge-assertion
// bx by bz tx ty tz line file_bytes condition_bytes\n", then the file and the condition.
bool read_assertion(const std::string& record, HostAssertion& a) {
  std::istringstream head(record);
  std::string tag;
  std::size_t file_bytes = 0, condition_bytes = 0;
  head >> tag >> a.block[0] >> a.block[1] >> a.block[2] >> a.thread[0] >> a.thread[1] >>
      a.thread[2] >> a.line >> file_bytes >> condition_bytes;
  const std::size_t body = record.find('\n');
  if (!head || tag != "kjudge-assertion" || body == std::string::npos) return false;
  a.caught = true;
  const std::string texts = record.substr(body + 1);
  a.file = texts.substr(0, std::min(file_bytes, texts.size()));
  a.condition = texts.substr(a.file.size(), condition_bytes);
  return true;
}

} // namespace

std::string HostModule::launch(int index, const unsigned grid[3], const unsigned block[3],
                               unsigned shared_bytes, void** args, unsigned workers,
                               HostAssertion* assertion) const {
  if (index < 0 || index >= count_()) return fmt::format("no kernel {}", index);
  char error[1024] = {0};
  const int rc = launch_(index, grid, block, shared_bytes, args, workers, run_on_block_threads,
                         error, sizeof error);
  if (rc == 0) return "";
  if (rc == 2) {
    // The candidate's text stays in the fields: only a caller that quotes it may show it.
    HostAssertion a;
    if (read_assertion(error, a) && assertion) *assertion = std::move(a);
    return "device assertion failed";
  }
  return error[0] ? std::string(error) : std::string("the launch failed");
}

std::string HostModule::track(const void* lo, std::size_t bytes, const void* origin,
                              const std::vector<unsigned long>& spans, bool races) const {
  if (!track_) return "the module is not a checked build";
  const int rc = track_(lo, bytes, origin, spans.data(), static_cast<unsigned>(spans.size() / 2),
                        races ? 1 : 0);
  switch (rc) {
  case 0: return "";
  case 1: return fmt::format("too many buffers to track ({})", spans.size() / 2);
  case 2: return fmt::format("no memory for the shadow of {} bytes", bytes);
  default: return "a buffer lies outside the tracked range";
  }
}

void place_finding(ShadowFinding& finding, const fs::path& shared_object,
                   std::string_view file_name) {
  std::vector<ShadowAccess*> accesses = {&finding.current};
  if (finding.race) accesses.push_back(&finding.previous);
  std::vector<std::string> argv = {"addr2line", "-e", shared_object.string(), "-i", "-a"};
  for (const ShadowAccess* a : accesses)
    argv.push_back(fmt::format("{:#x}", a->pc));
  const fs::path scratch = util::new_private_temp_folder("kjudge-addr2line");
  const fs::path log = scratch / "addr2line.txt";
  const int rc = run(argv, log);
  std::istringstream lines(read_file(log));
  std::error_code ec;
  fs::remove_all(scratch, ec);
  if (rc != 0) return;
  // With -a each address is echoed ("0x..."), then its frames, the innermost first.
  int at = -1;
  for (std::string line; std::getline(lines, line);) {
    if (line.rfind("0x", 0) == 0) {
      ++at;
      continue;
    }
    if (at < 0 || at >= static_cast<int>(accesses.size())) continue;
    if (ShadowAccess& a = *accesses[static_cast<std::size_t>(at)]; a.place.empty())
      a.place = place_in_frame(line, file_name);
  }
}

} // namespace kj
