// --help comes from docs/cli.md, embedded at build time (cli_help.hpp), so the terminal and the
// documentation share one text. The overview is the text before the first `## ` heading;
// `## kjudge COMMAND` sections are a command's help. The terminal gets them as plain text
// (terminal_help): a command's usage, first paragraph, options and exit status; the rest of its
// section stays in docs/cli.md, which the help names.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <CLI/CLI.hpp>

namespace kj::cli {

std::string help_overview();
// The `## kjudge COMMAND` section, heading included; nullopt when cli.md has none.
std::optional<std::string> help_section(std::string_view command);
// The COMMAND of every `## kjudge COMMAND` heading, in document order.
std::vector<std::string> documented_commands();
// The options a section's `Options` block lists, each by its first spelling ("--json", "-o",
// "PROBLEM"), in order.
std::vector<std::string> documented_options(const std::string& section);
// Markdown text as a terminal shows it: no heading marks, code spans or emphasis marks, links
// as their text. With `command`, a section cut to its usage, first paragraph, options and exit
// status, and a last line naming the rest.
std::string terminal_help(const std::string& markdown, std::string_view command = {});

// CLI11's help printer replaced by the sections above.
class MarkdownFormatter : public CLI::FormatterBase {
public:
  std::string make_help(const CLI::App* app, std::string name,
                        CLI::AppFormatMode mode) const override;
};

}  // namespace kj::cli
