// --help comes from docs/cli.md, embedded at build time (cli_help.hpp). The overview is the
// text before the first `## ` heading; `## kjudge COMMAND` sections are a command's help.
// Printing them verbatim keeps one text for the terminal and the documentation.
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

// CLI11's help printer replaced by the sections above.
class MarkdownFormatter : public CLI::FormatterBase {
public:
  std::string make_help(const CLI::App* app, std::string name,
                        CLI::AppFormatMode mode) const override;
};

}  // namespace kj::cli
