// The JSON Lines log of a long run (a benchmark sweep, a mutation campaign): results are
// appended one line at a time and flushed, so a crash loses at most the line being written and
// a rerun resumes where it stopped. The first line is the manifest with schema_version; a log
// is resumed only when it matches, because results of a changed problem or candidate must not
// be mixed with the old ones.
#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>

#include <fmt/format.h>

#include "kjudge/report.hpp"

namespace kj {

namespace {

using nlohmann::json;

std::string dump_line(const json& j) {
  return j.dump(-1, ' ', false, json::error_handler_t::replace) + '\n';
}

std::string short_value(const json& j) {
  if (j.is_string()) return j.get<std::string>();
  return j.is_null() ? "none" : j.dump();
}

// Names what changed between two manifests, the problem hash first because that is the usual
// cause (the problem was edited since the log was started).
std::string manifest_difference(const json& logged, const json& now) {
  auto describe = [](const std::string& key, const json& a, const json& b) {
    std::string label = key;
    for (auto& ch : label)
      if (ch == '_') ch = ' ';
    return fmt::format("{} {} in the log, {} now", label, short_value(a), short_value(b));
  };
  const json none;
  auto at = [&](const json& j, const std::string& key) -> const json& {
    return j.is_object() && j.contains(key) ? j.at(key) : none;
  };
  if (at(logged, "problem_hash") != at(now, "problem_hash"))
    return describe("problem_hash", at(logged, "problem_hash"), at(now, "problem_hash"));
  if (logged.is_object() && now.is_object()) {
    for (const auto& [key, value] : now.items())
      if (at(logged, key) != value) return describe(key, at(logged, key), value);
    for (const auto& [key, value] : logged.items())
      if (!now.contains(key)) return describe(key, value, none);
  }
  return fmt::format("{} in the log, {} now", logged.dump(), now.dump());
}

void write_all(std::FILE* file, const std::string& text, const std::filesystem::path& path) {
  if (std::fwrite(text.data(), 1, text.size(), file) != text.size() || std::fflush(file) != 0)
    throw InternalError(fmt::format("cannot write {}: {}", path.string(), std::strerror(errno)));
}

}  // namespace

JsonlWriter::JsonlWriter(const std::filesystem::path& path, const json& manifest) {
  path_ = path;
  const json header = {{"manifest", manifest}, {"schema_version", kJsonSchemaVersion}};
  const Location where{path.string(), "", 0, 0};
  std::error_code ec;
  std::string text;
  if (std::filesystem::exists(path, ec)) {
    std::ifstream in(path, std::ios::binary);
    if (!in) throw SpecError(where, fmt::format("cannot read: {}", std::strerror(errno)));
    std::ostringstream buffer;
    buffer << in.rdbuf();
    text = buffer.str();
  }

  // Keep every complete, parseable line; `kept` is the byte length of what survives.
  std::size_t kept = 0;
  bool have_header = false;
  int line_no = 0;
  for (std::size_t pos = 0; pos < text.size();) {
    const std::size_t nl = text.find('\n', pos);
    ++line_no;
    const bool complete = nl != std::string::npos;
    const std::size_t end = complete ? nl : text.size();
    const bool last = !complete || end + 1 >= text.size();
    json record = json::parse(text.begin() + static_cast<std::ptrdiff_t>(pos),
                              text.begin() + static_cast<std::ptrdiff_t>(end), nullptr, false);
    if (!complete || record.is_discarded()) {
      // A crash mid-write leaves a partial last line: drop it and rerun that record. Damage
      // anywhere else is not a crash's signature, and guessing would hide lost results.
      if (last) break;
      throw SpecError({path.string(), "", line_no, 0},
                      "damaged line in a JSON Lines log; refusing to resume");
    }
    if (!have_header) {
      if (!record.is_object() || !record.contains("manifest"))
        throw SpecError(where, "not a kjudge JSON Lines log (no manifest on the first line); "
                               "refusing to resume");
      const json& logged = record["manifest"];
      if (logged != manifest)
        throw SpecError({}, fmt::format("refusing to resume {}: manifest differs ({})",
                                        path.string(), manifest_difference(logged, manifest)));
      if (record.value("schema_version", json()) != json(kJsonSchemaVersion))
        throw SpecError({}, fmt::format("refusing to resume {}: schema_version {} in the log, "
                                        "{} now",
                                        path.string(),
                                        short_value(record.value("schema_version", json())),
                                        kJsonSchemaVersion));
      have_header = true;
    } else {
      resumed_.push_back(std::move(record));
    }
    kept = end + 1;
    pos = end + 1;
  }

  if (have_header) {
    if (kept < text.size()) {
      std::filesystem::resize_file(path, kept, ec);
      if (ec)
        throw InternalError(
            fmt::format("cannot cut the partial last line of {}: {}", path.string(), ec.message()));
    }
    file_ = std::fopen(path.c_str(), "ab");
  } else {
    // A new log, or one whose header line was cut short: start over. Anything else is some
    // other file, which a wrong --log argument must not destroy.
    const std::string fresh = dump_line(header);
    if (!text.empty() && fresh.compare(0, text.size(), text) != 0)
      throw SpecError(where, "not a kjudge JSON Lines log of this run (its first line is not a "
                             "manifest); refusing to overwrite it");
    file_ = std::fopen(path.c_str(), "wb");
  }
  if (!file_)
    throw SpecError(where, fmt::format("cannot open for writing: {}", std::strerror(errno)));
  if (!have_header) {
    try {
      write_all(file_, dump_line(header), path);
    } catch (...) {
      std::fclose(file_);
      file_ = nullptr;
      throw;
    }
  }
}

JsonlWriter::~JsonlWriter() {
  if (file_) std::fclose(file_);
}

void JsonlWriter::append(const json& record) {
  KJ_EXPECTS(file_ != nullptr, "the log is open");
  write_all(file_, dump_line(record), path_);
}

}  // namespace kj
