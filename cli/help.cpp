// Splits the embedded docs/cli.md into the overview and one section per command. Headings
// inside fenced code blocks do not count, so examples may show Markdown.
#include "help.hpp"

#include <sstream>

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

std::string MarkdownFormatter::make_help(const CLI::App* app, std::string,
                                         CLI::AppFormatMode) const {
  if (app->get_parent() == nullptr) return help_overview();
  if (auto section = help_section(app->get_name())) return *section;
  // The help test makes this unreachable; a missing section must still not be silent.
  return "kjudge " + app->get_name() + ": no section in docs/cli.md\n";
}

}  // namespace kj::cli
