// Splits the embedded docs/cli.md into the overview and one section per command. Headings
// inside fenced code blocks do not count, so examples may show Markdown.
#include "help.hpp"

#include <cctype>
#include <sstream>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "cli_help.hpp"

namespace kj::cli {

namespace {

struct Section {
  std::string heading;  // "kjudge validate"; empty for the overview
  std::string text;
};

std::vector<Section> split_sections() {
  std::vector<Section> sections(1);
  std::istringstream in{std::string(kCliMarkdown)};
  bool fenced = false;
  for (std::string line; std::getline(in, line);) {
    if (line.rfind("```", 0) == 0) fenced = !fenced;
    if (!fenced && line.rfind("## ", 0) == 0) {
      std::string heading = line.substr(3);
      while (!heading.empty() && heading.back() == ' ')
        heading.pop_back();
      sections.push_back({heading, ""});
    }
    sections.back().text += line + '\n';
  }
  // Trailing blank lines would double the terminal's own spacing.
  for (auto& s : sections)
    while (s.text.size() >= 2 && s.text[s.text.size() - 1] == '\n' &&
           s.text[s.text.size() - 2] == '\n')
      s.text.pop_back();
  return sections;
}

const std::vector<Section>& sections() {
  static const std::vector<Section> all = split_sections();
  return all;
}

constexpr std::string_view kPrefix = "kjudge ";

}  // namespace

std::string help_overview() {
  return sections().front().text;
}

std::optional<std::string> help_section(std::string_view command) {
  for (const auto& s : sections())
    if (s.heading.size() > kPrefix.size() && s.heading.rfind(kPrefix, 0) == 0 &&
        std::string_view(s.heading).substr(kPrefix.size()) == command)
      return s.text;
  return std::nullopt;
}

std::vector<std::string> documented_commands() {
  std::vector<std::string> out;
  for (const auto& s : sections())
    if (s.heading.size() > kPrefix.size() && s.heading.rfind(kPrefix, 0) == 0)
      out.push_back(s.heading.substr(kPrefix.size()));
  return out;
}

namespace {

// `code`, **strong**, *emphasis* and [text](link) as plain text; `#` heading marks dropped.
std::string plain_line(std::string_view line) {
  std::size_t hashes = 0;
  while (hashes < line.size() && line[hashes] == '#') ++hashes;
  if (hashes > 0 && hashes < line.size() && line[hashes] == ' ') line.remove_prefix(hashes + 1);
  std::string out;
  for (std::size_t i = 0; i < line.size(); ++i) {
    const char c = line[i];
    if (c == '`') continue;
    if (c == '*' && i + 1 < line.size() && line[i + 1] == '*') {
      ++i;
      continue;
    }
    if (c == '[') {
      const auto close = line.find("](", i);
      const auto end = close == line.npos ? line.npos : line.find(')', close);
      if (end != line.npos) {
        out += line.substr(i + 1, close - i - 1);
        i = end;
        continue;
      }
    }
    out += c;
  }
  return out;
}

std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> out;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) out.push_back(line);
  return out;
}

bool blank(const std::string& line) { return line.find_first_not_of(' ') == std::string::npos; }
bool indented(const std::string& line) { return line.rfind("    ", 0) == 0; }

// The lines of the first `Options` block from line `from` on: its "Options..." line and the
// indented and blank lines after it.
std::vector<std::string> options_block(const std::vector<std::string>& lines,
                                       std::size_t from = 0) {
  std::vector<std::string> out;
  bool in = false;
  for (std::size_t i = from; i < lines.size(); ++i) {
    const std::string& line = lines[i];
    if (!in && line.rfind("Options", 0) == 0) in = true;
    else if (in && !blank(line) && !indented(line)) break;
    if (in) out.push_back(line);
  }
  while (!out.empty() && blank(out.back())) out.pop_back();
  return out;
}

}  // namespace

std::vector<std::string> documented_options(const std::string& section) {
  std::vector<std::string> out;
  for (const auto& line : options_block(lines_of(section))) {
    // An option's line starts at column 4 with its name; its description's lines start deeper.
    if (!indented(line) || line.size() < 5 || line[4] == ' ') continue;
    std::string word = line.substr(4, line.find_first_of(" ,", 4) - 4);
    if (word.ends_with("...")) word.resize(word.size() - 3);  // PROBLEM...: one or more
    if (word[0] == '-' || std::isupper(static_cast<unsigned char>(word[0]))) out.push_back(word);
  }
  return out;
}

std::string terminal_help(const std::string& markdown, std::string_view command) {
  const std::vector<std::string> lines = lines_of(markdown);
  std::vector<std::string> kept;
  std::vector<std::string> more;  // the section's subsections, named at the end
  if (command.empty()) {
    kept = lines;
  } else {
    // The heading and the Usage block, the first paragraph after it, the Options block and an
    // Exit status paragraph, each separated by a blank line.
    auto paragraph_at = [&](std::size_t i) {
      std::vector<std::string> p;
      for (; i < lines.size() && !blank(lines[i]); ++i) p.push_back(lines[i]);
      return p;
    };
    auto add = [&](const std::vector<std::string>& block) {
      if (block.empty()) return;
      if (!kept.empty()) kept.push_back("");
      kept.insert(kept.end(), block.begin(), block.end());
    };
    add({lines.front()});
    bool described = false;
    for (std::size_t i = 1; i < lines.size(); ++i) {
      if (lines[i].rfind("### ", 0) == 0) more.push_back(lines[i].substr(4));
      if (blank(lines[i]) || !blank(lines[i - 1])) continue;  // paragraph starts only
      if (lines[i].rfind("Usage:", 0) == 0) {
        add(paragraph_at(i));
      } else if (lines[i].rfind("Options", 0) == 0) {
        add(options_block(lines, i));
      } else if (lines[i].rfind("Exit status", 0) == 0) {
        add(paragraph_at(i));
      } else if (!described && !indented(lines[i]) && lines[i][0] != '#') {
        add(paragraph_at(i));
        described = true;
      }
    }
    kept.push_back("");
    std::string rest = fmt::format("The rest of `kjudge {}`: docs/cli.md, section \"kjudge {}\"",
                                   command, command);
    if (!more.empty()) rest += fmt::format(" ({})", fmt::join(more, "; "));
    kept.push_back(rest + ".");
  }
  std::string out;
  bool fenced = false;
  for (const auto& line : kept) {
    if (line.rfind("```", 0) == 0) {
      fenced = !fenced;
      continue;
    }
    out += (fenced ? "    " + line : plain_line(line)) + '\n';
  }
  return out;
}

std::string MarkdownFormatter::make_help(const CLI::App* app, std::string,
                                         CLI::AppFormatMode) const {
  if (app->get_parent() == nullptr) return terminal_help(help_overview());
  if (auto section = help_section(app->get_name()))
    return terminal_help(*section, app->get_name());
  // The help test makes this unreachable; a missing section must still not be silent.
  return "kjudge " + app->get_name() + ": no section in docs/cli.md\n";
}

}  // namespace kj::cli
