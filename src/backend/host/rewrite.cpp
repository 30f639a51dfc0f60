// rewrite_for_host (kjudge/host_backend.hpp): the lexer's tokens, not a parser. What the CPU
// cannot run, and what each compiler answers its own way, is refused with its line, before the
// host compiler sees it; the candidate's own names are kept apart from the host's
// (own_names.cpp); every `__shared__` declaration is replaced in place by one line that binds
// its name to per-block storage; kjudge's entries follow.
#include <fmt/format.h>

#include <set>
#include <string>
#include <vector>

#include "kjudge/host_backend.hpp"
#include "kjudge/lex.hpp"

namespace kj {

namespace {

using lex::Token;
using lex::TokenKind;

// Identifiers (and the start of qualified names) the host cannot run, with what to call them.
struct Refused {
  std::string_view token;
  std::string_view construct;
};
constexpr Refused kRefused[] = {
    {"asm", "inline PTX (asm)"},
    {"__asm__", "inline PTX (asm)"},
    {"__asm", "inline PTX (asm)"},
    {"__has_include", "__has_include (a probe of the host's files)"},
    {"__has_include_next", "__has_include (a probe of the host's files)"},
    {"wmma", "tensor-core instructions (wmma)"},
    {"mma_sync", "tensor-core instructions (mma_sync)"},
    {"__hmma_m16n16k16_mma_f32f32", "tensor-core instructions"},
    // Cooperative groups run at block and warp level (kjudge/host/cooperative_groups.hpp); a
    // grid barrier cannot be met by blocks that run one after another.
    {"this_grid", "grid-wide synchronisation (cooperative_groups::this_grid)"},
    {"grid_group", "grid-wide synchronisation (cooperative_groups::grid_group)"},
    {"this_multi_grid", "multi-device synchronisation (cooperative_groups::this_multi_grid)"},
    {"multi_grid_group", "multi-device synchronisation (cooperative_groups::multi_grid_group)"},
    {"this_cluster", "thread-block clusters (cooperative_groups::this_cluster)"},
    {"cluster_group", "thread-block clusters (cooperative_groups::cluster_group)"},
    {"block_tile_memory", "tiles of more than 32 threads (cooperative_groups::block_tile_memory)"},
    {"reduce_update_async", "atomic updates of cooperative groups (reduce_update_async)"},
    {"inclusive_scan_update", "atomic updates of cooperative groups (inclusive_scan_update)"},
    {"exclusive_scan_update", "atomic updates of cooperative groups (exclusive_scan_update)"},
    {"cub", "CUB"},
    {"__syncthreads_count", "__syncthreads_count"},
    {"__syncthreads_and", "__syncthreads_and"},
    {"__syncthreads_or", "__syncthreads_or"},
    {"__match_any_sync", "__match_any_sync"},
    {"__match_all_sync", "__match_all_sync"},
    {"__reduce_add_sync", "warp reduce intrinsics"},
    {"clock64", "clock reads (clock64)"},
    {"clock", "clock reads (clock)"},
    {"__nanosleep", "__nanosleep"},
};

// What each compiler answers its own way, refused where the host compiles the program NVRTC
// compiled: `void k(float *)` in NVRTC's __PRETTY_FUNCTION__, `void k(float*)` in g++'s, a
// character a kernel could branch on; __builtin_constant_p's answer is each optimiser's.
constexpr Refused kCompilersOwn[] = {
    {"__PRETTY_FUNCTION__", "__PRETTY_FUNCTION__ (each compiler spells it its own way)"},
    {"__FUNCSIG__", "__FUNCSIG__ (each compiler spells it its own way)"},
    {"__FUNCDNAME__", "__FUNCDNAME__ (each compiler spells it its own way)"},
    {"__builtin_FUNCTION", "__builtin_FUNCTION (each compiler spells it its own way)"},
    {"__builtin_constant_p", "__builtin_constant_p (each optimiser answers it its own way)"},
};

[[noreturn]] void refuse(std::string_view file_name, int line, std::string_view what) {
  throw UnsupportedOnHost(
      fmt::format("unsupported on host backend: {} at {}:{}", what, file_name, line));
}

bool is_ident(const Token& t, std::string_view source, std::string_view text) {
  return t.kind == TokenKind::identifier && t.text(source) == text;
}
bool is_punct(const Token& t, std::string_view source, std::string_view text) {
  return t.kind == TokenKind::punct && t.text(source) == text;
}

void refuse_what_the_cpu_cannot_run(std::string_view source, std::string_view file_name) {
  const lex::LexResult lexed = lex::tokenize(source);
  if (!lexed.errors.empty())
    throw UnsupportedOnHost(fmt::format("{}:{}: {}", file_name, lexed.errors.front().line,
                                        lexed.errors.front().message));
  for (const Token& t : lexed.tokens) {
    if (t.kind == TokenKind::preprocessor) {
      const std::string_view line = t.text(source);
      // cooperative_groups.h, reduce.h and scan.h have the host's stand-ins; the rest do not.
      if (const auto at = line.find("cooperative_groups/"); at != std::string_view::npos) {
        const std::string_view rest = line.substr(at + 19);
        const std::string_view header = rest.substr(0, rest.find_first_of(">\" \t"));
        if (header == "memcpy_async.h")
          refuse(file_name, t.line,
                 "asynchronous copies of cooperative groups (cooperative_groups/memcpy_async.h)");
        if (header != "reduce.h" && header != "scan.h")
          refuse(file_name, t.line,
                 fmt::format("cooperative_groups/{} (the host has cooperative_groups.h, "
                             "cooperative_groups/reduce.h and cooperative_groups/scan.h)",
                             header));
      }
      if (line.find("<cub/") != std::string_view::npos || line.find("\"cub/") != std::string_view::npos)
        refuse(file_name, t.line, "CUB");
      if (line.find("mma.h") != std::string_view::npos)
        refuse(file_name, t.line, "tensor-core instructions (mma.h)");
      if (line.find("__has_include") != std::string_view::npos)
        refuse(file_name, t.line, "__has_include (a probe of the host's files)");
    }
  }
  const std::vector<Token> code = lex::code_tokens(lexed);
  for (std::size_t i = 0; i < code.size(); ++i) {
    if (code[i].kind != TokenKind::identifier) continue;
    const std::string_view name = code[i].text(source);
    for (const Refused& r : kRefused) {
      if (name != r.token) continue;
      // `clock` only as a call, the rest wherever they appear.
      const bool call = i + 1 < code.size() && is_punct(code[i + 1], source, "(");
      if ((name == "clock" || name == "clock64") && !call) continue;
      refuse(file_name, code[i].line, r.construct);
    }
  }
}

void refuse_what_each_compiler_answers_its_own_way(std::string_view source,
                                                   std::string_view file_name) {
  for (const Token& t : lex::code_tokens(lex::tokenize(source)))
    if (t.kind == TokenKind::identifier)
      for (const Refused& r : kCompilersOwn)
        if (t.text(source) == r.token) refuse(file_name, t.line, r.construct);
}

std::string with_shared_storage_per_block(std::string_view source, const std::vector<Token>& code,
                                          std::string_view file_name) {
  // Replace each __shared__ declaration: [extern|static|volatile]* __shared__ [__align__(n)]
  // type name [dims] ;
  std::string out;
  std::size_t copied = 0;
  int next_id = 0;
  for (std::size_t i = 0; i < code.size(); ++i) {
    if (!is_ident(code[i], source, "__shared__")) continue;
    std::size_t first = i;
    bool is_extern = false, is_volatile = false;
    while (first > 0) {
      const Token& prev = code[first - 1];
      if (is_ident(prev, source, "extern")) is_extern = true;
      else if (is_ident(prev, source, "volatile")) is_volatile = true;
      else if (!is_ident(prev, source, "static")) break;
      --first;
    }
    std::size_t end = i + 1; // the `;`
    int depth = 0;
    while (end < code.size()) {
      const std::string_view tx = code[end].text(source);
      if (code[end].kind == TokenKind::punct) {
        if (tx == "(" || tx == "[" || tx == "{") ++depth;
        else if (tx == ")" || tx == "]" || tx == "}") --depth;
        else if (tx == ";" && depth == 0) break;
        else if (tx == "=" && depth == 0)
          refuse(file_name, code[i].line, "an initialised __shared__ variable");
      }
      ++end;
    }
    if (end >= code.size()) refuse(file_name, code[i].line, "a __shared__ declaration without ';'");
    // The tokens of type and declarator, without __align__(n) and alignas(n).
    std::vector<std::size_t> parts;
    for (std::size_t k = i + 1; k < end; ++k) {
      if (is_ident(code[k], source, "__align__") || is_ident(code[k], source, "alignas")) {
        int d = 0;
        for (++k; k < end; ++k) {
          if (is_punct(code[k], source, "(")) ++d;
          if (is_punct(code[k], source, ")") && --d == 0) break;
        }
        continue;
      }
      // A `volatile` after __shared__ stays where it is: `T* volatile p` is a volatile pointer,
      // `volatile T* p` a pointer to volatile, and moving it would turn one into the other.
      parts.push_back(k);
    }
    // Declarators split at the commas outside brackets and template arguments: `float As[..],
    // Bs[..]` declares two arrays of the first one's base type.
    std::vector<std::vector<std::size_t>> declarators(1);
    int nesting = 0;
    for (const std::size_t k : parts) {
      const std::string_view tx = code[k].text(source);
      if (code[k].kind == TokenKind::punct) {
        if (tx == "(" || tx == "[" || tx == "{" || tx == "<") ++nesting;
        else if (tx == ")" || tx == "]" || tx == "}" || tx == ">") --nesting;
        else if (tx == "," && nesting == 0) {
          declarators.emplace_back();
          continue;
        }
      }
      declarators.back().push_back(k);
    }
    if (is_extern && declarators.size() > 1)
      refuse(file_name, code[i].line, "an extern __shared__ declaration of several variables");
    auto join = [&](const std::vector<std::size_t>& tokens, std::size_t from, std::size_t to) {
      std::string s;
      for (std::size_t p = from; p < to; ++p) {
        if (!s.empty()) s += ' ';
        s += code[tokens[p]].text(source);
      }
      return s;
    };
    std::string replacement, base;
    for (std::size_t d = 0; d < declarators.size(); ++d) {
      const std::vector<std::size_t>& tokens = declarators[d];
      // The name: the identifier before the first `[` (or the last token).
      std::size_t name_at = tokens.size();
      for (std::size_t p = 0; p < tokens.size(); ++p)
        if (is_punct(code[tokens[p]], source, "[")) {
          name_at = p;
          break;
        }
      if (name_at == 0 || name_at > tokens.size() ||
          code[tokens[name_at - 1]].kind != TokenKind::identifier)
        refuse(file_name, code[i].line, "a __shared__ declaration kjudge cannot read");
      --name_at;
      // The first declarator's type up to its first `*` or `&` is every declarator's base.
      if (d == 0) {
        std::size_t base_end = 0;
        while (base_end < name_at && !is_punct(code[tokens[base_end]], source, "*") &&
               !is_punct(code[tokens[base_end]], source, "&"))
          ++base_end;
        base = join(tokens, 0, base_end);
      }
      const std::string own = d == 0 ? join(tokens, 0, name_at)
                                     : base + (name_at > 0 ? " " + join(tokens, 0, name_at) : "");
      const std::string type = (is_volatile ? "volatile " : "") + own;
      const std::string name(code[tokens[name_at]].text(source));
      const std::string dims = join(tokens, name_at + 1, tokens.size());
      if (own.empty()) refuse(file_name, code[i].line, "a __shared__ declaration without a type");
      if (!replacement.empty()) replacement += ' ';
      if (is_extern) {
        if (dims != "[ ]")
          refuse(file_name, code[i].line,
                 "an extern __shared__ declaration that is not an array []");
        replacement += fmt::format("{}* {} = ::kjh::dynamic_shared<{}>();", type, name, type);
      } else {
        replacement += fmt::format("auto& {} = ::kjh::block_shared<{} {}, {}>();", name, type,
                                   dims, next_id++);
      }
    }
    const std::size_t from = code[first].offset;
    const std::size_t to = code[end].offset + code[end].length;
    out.append(source.substr(copied, from - copied));
    out += replacement;
    // Keep the line count: the newlines the declaration spanned follow the replacement.
    for (std::size_t k = from; k < to; ++k)
      if (source[k] == '\n') out += '\n';
    copied = to;
    i = end;
  }
  out.append(source.substr(copied));
  return out;
}

// kjudge's entries: one per name expression and the kj_host_* functions the loader calls.
std::string entries(const std::vector<std::string>& expressions) {
  // They are no line of the candidate's (its coverage, its messages).
  std::string out = "\n#line 1 \"kjudge-host-entries\"\n";
  for (std::size_t k = 0; k < expressions.size(); ++k)
    out += fmt::format("static void kj_entry_{}(void** a) {{ ::kjh::invoke(&{}, a); }}\n", k,
                       expressions[k]);
  out += "extern \"C\" unsigned long long kj_host_last_launch_cpu_ns() { return "
         "::kjh::last_launch_cpu_ns; }\n";
  out += "extern \"C\" int kj_host_kernel_count() { return " + std::to_string(expressions.size()) +
         "; }\n";
  out += "static const ::kjh::Entry kj_entries[] = {";
  for (std::size_t k = 0; k < expressions.size(); ++k)
    out += fmt::format("{}kj_entry_{}", k ? ", " : "", k);
  if (expressions.empty()) out += "nullptr";
  out += "};\n";
  out += R"(extern "C" int kj_host_launch(int index, const unsigned* grid, const unsigned* block,
                              unsigned shared, void** args, unsigned workers,
                              ::kjh::Parallel parallel, char* error, unsigned long error_len) {
  try {
    ::kjh::launch(kj_entries[index], grid, block, shared, args, workers, parallel);
    return 0;
  } catch (const ::kjh::DeviceAssertion& a) {
    // The fields as HostModule::launch reads them; the texts capped so that both fit.
    const int file = static_cast<int>(a.file.size() < 256 ? a.file.size() : 256);
    const int condition = static_cast<int>(a.condition.size() < 600 ? a.condition.size() : 600);
    std::snprintf(error, error_len, "kjudge-assertion %u %u %u %u %u %u %u %d %d\n%.*s%.*s",
                  a.block.x, a.block.y, a.block.z, a.thread.x, a.thread.y, a.thread.z, a.line,
                  file, condition, file, a.file.data(), condition, a.condition.data());
    return 2;
  } catch (const std::exception& e) {
    std::snprintf(error, error_len, "%s", e.what());
  } catch (...) {
    std::snprintf(error, error_len, "an exception that is not a std::exception");
  }
  return 1;
}
)";
  return out;
}

} // namespace

std::string rewrite_for_host(std::string_view original, std::string_view file_name,
                             const std::vector<std::string>& expressions,
                             const std::set<std::string, std::less<>>* nvrtc_known) {
  refuse_what_the_cpu_cannot_run(original, file_name);
  if (nvrtc_known) refuse_what_each_compiler_answers_its_own_way(original, file_name);
  const std::string own = nvrtc_known ? keep_own_names_apart(original, *nvrtc_known) : "";
  const std::string_view source = nvrtc_known ? std::string_view(own) : original;
  const std::vector<Token> code = lex::code_tokens(lex::tokenize(source));
  std::vector<std::string> own_expressions;
  for (const std::string& e : expressions)
    own_expressions.push_back(nvrtc_known ? keep_own_names_apart(e, *nvrtc_known) : e);
  return with_shared_storage_per_block(source, code, file_name) + entries(own_expressions);
}

} // namespace kj
