// A candidate: one .cu file whose launch plan is TOML inside its leading `/* kjudge ... */`
// comment. The comment is found with the CUDA lexer (so a "/* kjudge" inside a string literal is
// not one), its TOML is parsed with the comment's lines kept in place so that every error names a
// line of the .cu file, and the plan is checked against the problem: names, allowed options,
// and every expression evaluated on the public shape sets. Hidden sets are not evaluated here, so
// an error message cannot tell a candidate's author anything about them.
#include <fmt/format.h>

#include <algorithm>
#include <fstream>
#include <sstream>

#include "kjudge/lex.hpp"
#include "kjudge/spec.hpp"
#include "spec/internal.hpp"

namespace kj {

using detail::TomlContext;

namespace {

constexpr std::string_view kKeyword = "kjudge";

// Offset just past "kjudge" when the block comment's text starts with it, else npos.
std::size_t front_matter_keyword_end(std::string_view comment) {
  if (comment.substr(0, 2) != "/*") return std::string_view::npos;
  std::size_t i = 2;
  while (i < comment.size() &&
         (comment[i] == ' ' || comment[i] == '\t' || comment[i] == '\n' || comment[i] == '\r'))
    ++i;
  if (comment.substr(i, kKeyword.size()) != kKeyword) return std::string_view::npos;
  const std::size_t end = i + kKeyword.size();
  // "kjudge" must be a word of its own: "/* kjudgement */" is an ordinary comment.
  if (end < comment.size()) {
    const char c = comment[end];
    if (!(c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '*'))
      return std::string_view::npos;
  }
  return end;
}

struct Found {
  std::size_t offset = 0; // of "/*"
  std::size_t length = 0;
  std::size_t keyword_end = 0; // relative to offset
  int line = 0;
};

Found find_front_matter(const std::string& source, const std::string& name) {
  const lex::LexResult lexed = lex::tokenize(source);
  std::optional<Found> found;
  const lex::Token* first_code = nullptr;
  for (const lex::Token& t : lexed.tokens) {
    if (t.kind == lex::TokenKind::preprocessor) continue;
    if (t.kind != lex::TokenKind::comment) {
      if (!first_code) first_code = &t;
      continue;
    }
    const std::string_view text = t.text(source);
    const std::size_t kw = front_matter_keyword_end(text);
    if (kw == std::string_view::npos) continue;
    Location where{name, "", t.line, t.column};
    if (found)
      throw SpecError(where, fmt::format("a second /* kjudge ... */ launch plan (the first is at "
                                         "line {}); a candidate has exactly one",
                                         found->line));
    if (first_code)
      throw SpecError(where, fmt::format("the /* kjudge ... */ launch plan must come before any "
                                         "code (code starts at line {})",
                                         first_code->line));
    if (text.size() < 4 || text.substr(text.size() - 2) != "*/")
      throw SpecError(where, "the /* kjudge ... */ launch plan is not closed by */");
    found = Found{t.offset, t.length, kw, t.line};
  }
  if (!found)
    throw SpecError(Location{name, "", 0, 0},
                    fmt::format("no /* kjudge ... */ launch plan at the top of {}", name));
  return *found;
}

// The TOML of the comment, laid out so its line and column numbers are those of the .cu file
// (less the lines above the comment): everything from the start of the comment's first line
// through "kjudge" becomes spaces, newlines kept.
std::string front_matter_toml(const std::string& source, const Found& f) {
  std::size_t line_start = source.rfind('\n', f.offset == 0 ? 0 : f.offset - 1);
  line_start = (line_start == std::string::npos || f.offset == 0) ? 0 : line_start + 1;
  std::string out = source.substr(line_start, f.offset + f.length - 2 - line_start);
  const std::size_t blank_end = f.offset - line_start + f.keyword_end;
  for (std::size_t i = 0; i < blank_end; ++i)
    if (out[i] != '\n') out[i] = ' ';
  return out;
}

// `requires = [...]`: each entry one of the problem's `may_require`, matched without blanks and
// kept as the problem writes it.
void load_requirements(const toml::node& node, const Problem& problem, const TomlContext& ctx,
                       Candidate& c) {
  const std::vector<std::string> texts = detail::string_list(node, "requires", ctx);
  const toml::array& arr = *node.as_array();
  for (std::size_t i = 0; i < texts.size(); ++i) {
    Precondition asked;
    asked.text = texts[i];
    const std::string wanted = asked.normalized();
    const auto allowed =
        std::find_if(problem.may_require.begin(), problem.may_require.end(),
                     [&](const Precondition& p) { return p.normalized() == wanted; });
    if (allowed == problem.may_require.end()) {
      std::vector<std::string> listed;
      for (const Precondition& p : problem.may_require)
        listed.push_back(fmt::format("\"{}\"", p.text));
      ctx.fail(arr[i], fmt::format("requires[{}]", i),
               fmt::format("'{}' is not a precondition problem '{}' lets candidates declare "
                           "(may_require: {})",
                           texts[i], problem.name,
                           listed.empty() ? std::string("none")
                                          : fmt::format("{}", fmt::join(listed, ", "))));
    }
    c.requirements.push_back(*allowed);
  }
}

// A scratch buffer's `stage`: the problem's stage it holds, in the stage's dtype, one buffer
// per stage.
void load_scratch_stage(const toml::node& node, const Problem& problem, const Candidate& c,
                        const TomlContext& ctx, ScratchSpec& s) {
  const std::string field = fmt::format("scratch[{}].stage", c.scratch.size());
  s.stage = detail::need_string(node, field, ctx);
  const StageSpec* stage = problem.find_stage(s.stage);
  if (!stage)
    ctx.fail(node, field,
             problem.stages.empty()
                 ? fmt::format("no stage '{}': problem '{}' declares no [[stage]]", s.stage,
                               problem.name)
                 : fmt::format("no stage '{}' in problem '{}'", s.stage, problem.name));
  if (stage->dtype != s.dtype)
    ctx.fail(node, field,
             fmt::format("scratch '{}' is {}, but stage '{}' is {}: a stage's buffer holds its "
                         "interface dtype",
                         s.name, dtype_name(s.dtype), s.stage, dtype_name(stage->dtype)));
  for (const ScratchSpec& other : c.scratch)
    if (other.stage == s.stage)
      ctx.fail(node, field,
               fmt::format("scratch '{}' holds stage '{}' already", other.name, s.stage));
}

// A launch's `stage`: the launch completes that stage in the scratch buffer that holds it, so
// the buffer is among its args.
void check_launch_stage(const LaunchSpec& l, const std::string& field, const Candidate& c) {
  if (l.stage.empty()) return;
  const auto buffer = std::find_if(c.scratch.begin(), c.scratch.end(),
                                   [&](const ScratchSpec& s) { return s.stage == l.stage; });
  if (buffer == c.scratch.end())
    throw SpecError(l.where, fmt::format("{}.stage: no scratch buffer holds stage '{}' (give it "
                                         "`stage = \"{}\"` in [[scratch]])",
                                         field, l.stage, l.stage));
  if (std::find(l.args.begin(), l.args.end(), buffer->name) == l.args.end())
    throw SpecError(l.where, fmt::format("{}.stage: the launch completes stage '{}' but does not "
                                         "take its buffer '{}' among its args",
                                         field, l.stage, buffer->name));
}

} // namespace

Candidate parse_candidate(std::string source, const std::string& name, const Problem& problem) {
  const Found found = find_front_matter(source, name);
  TomlContext ctx;
  ctx.file = name;
  ctx.line_offset = found.line - 1;
  ctx.top_level = "the launch plan";
  const std::string toml_text = front_matter_toml(source, found);
  toml::table root;
  try {
    root = toml::parse(toml_text, name);
  } catch (const toml::parse_error& e) {
    throw SpecError(ctx.at(e.source(), ""),
                    fmt::format("malformed TOML in the launch plan: {}", e.description()));
  }
  detail::check_keys(root, {"launch", "scratch", "options", "requires", "outputs"}, "", ctx);

  Candidate c;
  c.path = name;
  c.source.path = name;

  if (const toml::node* n = root.get("options")) {
    c.options = detail::string_list(*n, "options", ctx);
    const toml::array& arr = *n->as_array();
    for (std::size_t i = 0; i < c.options.size(); ++i) {
      const auto& allowed = problem.allowed_options;
      if (std::find(allowed.begin(), allowed.end(), c.options[i]) == allowed.end())
        ctx.fail(arr[i], fmt::format("options[{}]", i),
                 fmt::format("option '{}' is not allowed by problem '{}' (allowed: {})",
                             c.options[i], problem.name,
                             allowed.empty() ? std::string("none")
                                             : fmt::format("{}", fmt::join(allowed, " "))));
    }
  }

  // The names the plan may use: the problem's, then its own scratch tensors.
  detail::NameScope scope;
  std::map<std::string, std::string, std::less<>> taken;
  if (!problem.dims.public_sets.empty())
    for (const auto& [dim, v] : problem.dims.public_sets.front().values) {
      scope.int_names.insert(dim);
      taken.emplace(dim, "a dim");
    }
  for (const ScalarSpec& s : problem.scalars) {
    if (is_integer(s.dtype)) scope.int_names.insert(s.name);
    scope.scalars.insert(s.name);
    taken.emplace(s.name, "a scalar of the problem");
  }
  for (const InputSpec& in : problem.inputs) {
    scope.tensors.insert(in.name);
    taken.emplace(in.name, "an input of the problem");
  }
  for (const OutputSpec& out : problem.outputs) {
    scope.tensors.insert(out.name);
    taken.emplace(out.name, "an output of the problem");
  }
  for (const StageSpec& s : problem.stages) scope.stages.insert(s.name);

  if (const toml::node* n = root.get("scratch")) {
    const toml::array& arr = detail::need_array(*n, "scratch", ctx);
    for (std::size_t i = 0; i < arr.size(); ++i) {
      const std::string field = fmt::format("scratch[{}]", i);
      const toml::table& t = detail::need_table(arr[i], field, ctx);
      detail::check_keys(t, {"name", "dtype", "shape", "init", "stage"}, field, ctx);
      ScratchSpec s;
      s.where = ctx.at(t, field);
      const toml::node& nn = detail::need_key(t, "name", field, ctx);
      const std::string nf = detail::join(field, "name");
      s.name = detail::need_string(nn, nf, ctx);
      if (!detail::is_identifier(s.name))
        ctx.fail(nn, nf, fmt::format("'{}' is not a valid name", s.name));
      if (s.name == "i") ctx.fail(nn, nf, "'i' is reserved: it is the index of a repeated launch");
      if (auto it = taken.find(s.name); it != taken.end())
        ctx.fail(nn, nf, fmt::format("name '{}' is already {}", s.name, it->second));
      taken.emplace(s.name, fmt::format("used by {}", field));
      s.dtype = detail::need_dtype(detail::need_key(t, "dtype", field, ctx),
                                   detail::join(field, "dtype"), ctx);
      const std::string sf = detail::join(field, "shape");
      s.shape = detail::expr_list(detail::need_key(t, "shape", field, ctx), sf, ctx);
      for (const Expr& e : s.shape)
        e.check_names(scope.int_names);
      if (const toml::node* in = t.get("init")) {
        const std::string f = detail::join(field, "init");
        const std::string word = detail::need_string(*in, f, ctx);
        auto rule = parse_init_rule(word);
        if (!rule) ctx.fail(*in, f, fmt::format("unknown value '{}' (known: poison, zero)", word));
        s.init = *rule;
      }
      if (const toml::node* st = t.get("stage")) load_scratch_stage(*st, problem, c, ctx, s);
      scope.tensors.insert(s.name);
      c.scratch.push_back(std::move(s));
    }
  }

  if (const toml::node* n = root.get("requires")) load_requirements(*n, problem, ctx, c);

  // What the problem decides (its outputs' initialisation, policies, shapes, cases, timeouts) is
  // not the candidate's to change: an [outputs] table used to switch poisoning off.
  if (const toml::node* n = root.get("outputs"))
    ctx.fail(*n, "outputs",
             "a candidate cannot change the problem's outputs (their init is the problem's): "
             "remove the [outputs] table; zero a scratch tensor of your own instead");

  const toml::node& ln = detail::need_key(root, "launch", "", ctx);
  const toml::array& launches = detail::need_array(ln, "launch", ctx);
  if (launches.empty()) ctx.fail(ln, "launch", "at least one launch is needed");
  for (std::size_t i = 0; i < launches.size(); ++i) {
    const std::string f = fmt::format("launch[{}]", i);
    c.source.launches.push_back(
        detail::parse_launch(detail::need_table(launches[i], f, ctx), f, scope, ctx));
    check_launch_stage(c.source.launches.back(), f, c);
  }

  // Public shape sets only: see the file comment.
  for (std::size_t i = 0; i < problem.dims.public_sets.size(); ++i) {
    const DimSet& set = problem.dims.public_sets[i];
    const Env env = shape_env(problem, set.values);
    const std::string desc = detail::describe_set(fmt::format("dims.public[{}]", i), set.values);
    for (const ScratchSpec& s : c.scratch) {
      try {
        const Shape shape = eval_shape(s.shape, env, s.name, detail::shape_where(s.shape, s.where));
        std::int64_t bytes = 0;
        if (__builtin_mul_overflow(checked_numel(shape),
                                   static_cast<std::int64_t>(dtype_size(s.dtype)), &bytes))
          throw SpecError(detail::shape_where(s.shape, s.where),
                          fmt::format("shape of '{}' overflows 64 bits: {} elements of {} bytes",
                                      s.name, checked_numel(shape), dtype_size(s.dtype)));
      } catch (const ExprError& err) {
        detail::rethrow_with(err, " for " + desc);
      } catch (const SpecError& err) {
        throw SpecError(err.where(), err.bare_message() + " for " + desc);
      }
    }
    // A set the candidate's preconditions exclude is never run: its plan need not fit it.
    const bool excluded = std::any_of(c.requirements.begin(), c.requirements.end(),
                                      [&](const Precondition& r) { return !r.holds(env); });
    if (excluded) continue;
    for (const LaunchSpec& l : c.source.launches)
      detail::check_launch_values(l, env, desc);
  }

  c.source.text = std::move(source);
  return c;
}

std::string code_name(std::string_view file_name) {
  std::string out(file_name);
  for (char& c : out)
    if (c == '"' || c == '\\' || static_cast<unsigned char>(c) < 0x20 || c == 0x7f) c = '_';
  return out;
}

Candidate load_candidate(const std::filesystem::path& file, const Problem& problem) {
  std::error_code ec;
  if (!std::filesystem::is_regular_file(file, ec))
    throw SpecError(Location{file.string(), "", 0, 0},
                    fmt::format("no candidate file '{}'", file.string()));
  std::ifstream in(file, std::ios::binary);
  std::ostringstream buf;
  buf << in.rdbuf();
  if (!in)
    throw SpecError(Location{file.string(), "", 0, 0},
                    fmt::format("cannot read candidate file '{}'", file.string()));
  Candidate c = parse_candidate(std::move(buf).str(), file.string(), problem);
  c.path = file;
  c.source.path = file;
  return c;
}

} // namespace kj
