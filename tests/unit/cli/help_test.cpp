// docs/cli.md is the source of --help. These tests keep it and the parser from drifting: every
// registered command has a `## kjudge COMMAND` section and every section a command, every
// option a command registers is named in its section and every option its Options block lists
// is registered, and --help prints that text as plain terminal text.
#include <algorithm>
#include <set>
#include <sstream>
#include <string>

#include <gtest/gtest.h>

#include "app.hpp"
#include "commands.hpp"
#include "help.hpp"

namespace {

using namespace kj::cli;

std::vector<CLI::App*> commands(CLI::App& app) {
  return app.get_subcommands([](CLI::App*) { return true; });
}

// Every spelling of an option: its positional name, -s and --long forms.
std::vector<std::string> spellings(const CLI::Option& opt) {
  std::vector<std::string> out;
  if (opt.get_lnames().empty() && opt.get_snames().empty()) out.push_back(opt.get_name(true));
  for (const auto& s : opt.get_snames())
    out.push_back("-" + s);
  for (const auto& l : opt.get_lnames())
    out.push_back("--" + l);
  return out;
}

TEST(Help, EveryCommandHasASectionAndEverySectionACommand) {
  Invocation in;
  auto app = make_app(in);
  std::set<std::string> registered, documented;
  for (auto* sub : commands(*app))
    registered.insert(sub->get_name());
  for (const auto& name : documented_commands())
    documented.insert(name);
  EXPECT_EQ(registered, documented);
  EXPECT_EQ(registered,
            (std::set<std::string>{"validate", "export", "cases", "compare", "check", "bench", "serve",
                                   "cache", "mutate", "audit", "card", "kernelbench", "run",
                                   "merge", "localize", "whatif"}));
}

TEST(Help, EveryOptionIsNamedInItsSection) {
  Invocation in;
  auto app = make_app(in);
  for (auto* sub : commands(*app)) {
    const auto section = help_section(sub->get_name());
    ASSERT_TRUE(section) << sub->get_name();
    for (const auto* opt : sub->get_options()) {
      if (opt == sub->get_help_ptr()) continue;  // --help is documented once, in the overview
      for (const auto& name : spellings(*opt))
        EXPECT_NE(section->find(name), std::string::npos)
            << "kjudge " << sub->get_name() << ": option " << name << " not in docs/cli.md";
    }
  }
  const std::string overview = help_overview();
  for (const auto* opt : app->get_options())
    for (const auto& name : spellings(*opt))
      EXPECT_NE(overview.find(name), std::string::npos) << name << " not in the overview";
  for (auto* sub : commands(*app))
    EXPECT_NE(overview.find(sub->get_name()), std::string::npos) << sub->get_name();
}

TEST(Help, EveryDocumentedOptionIsRegistered) {
  // The other way round: a section's Options block names no option its command lacks.
  Invocation in;
  auto app = make_app(in);
  for (auto* sub : commands(*app)) {
    std::set<std::string> registered;
    for (const auto* opt : sub->get_options())
      for (const auto& name : spellings(*opt)) registered.insert(name);
    const auto documented = documented_options(*help_section(sub->get_name()));
    EXPECT_FALSE(documented.empty()) << sub->get_name();
    for (const auto& name : documented)
      EXPECT_TRUE(registered.contains(name))
          << "docs/cli.md documents " << name << " for kjudge " << sub->get_name()
          << ", which its parser does not take";
  }
}

TEST(Help, TheTerminalGetsPlainText) {
  EXPECT_EQ(terminal_help("# kjudge command line\n\nSee `kjudge check` and **this** "
                          "[page](docs/cli.md).\n```\n## not a heading\n```\n"),
            "kjudge command line\n\nSee kjudge check and this page.\n    ## not a heading\n");
  const std::string section = "## kjudge x\n\nUsage: kjudge x [--y]\n       [--z]\n\nDoes "
                              "`x`.\nTwo lines.\n\nMore prose.\n\nOptions:\n\n    --y   "
                              "a y\n          more of y\n    --z   a z\n\nAfter.\n\nExit "
                              "status: 0.\n\n### Details\n\nDeep.\n";
  EXPECT_EQ(terminal_help(section, "x"),
            "kjudge x\n\nUsage: kjudge x [--y]\n       [--z]\n\nDoes x.\nTwo lines.\n\n"
            "Options:\n\n    --y   a y\n          more of y\n    --z   a z\n\nExit status: "
            "0.\n\nThe rest of kjudge x: docs/cli.md, section \"kjudge x\" (Details).\n");
  EXPECT_EQ(documented_options(section), (std::vector<std::string>{"--y", "--z"}));
}

TEST(Help, HelpPrintsTheSectionsAsPlainText) {
  std::ostringstream out, err;
  EXPECT_EQ(run({"--help"}, out, err), 0);
  EXPECT_EQ(out.str(), terminal_help(help_overview()));
  EXPECT_EQ(out.str().rfind("kjudge command line\n", 0), 0u);
  EXPECT_EQ(out.str().find('`'), std::string::npos);
  for (const char* cmd :
       {"validate", "export", "cases", "compare", "check", "bench", "serve", "cache"}) {
    std::ostringstream o, e;
    EXPECT_EQ(run({cmd, "--help"}, o, e), 0) << e.str();
    EXPECT_EQ(o.str(), terminal_help(*help_section(cmd), cmd)) << cmd;
    EXPECT_EQ(o.str().rfind(std::string("kjudge ") + cmd + "\n\nUsage: kjudge " + cmd, 0), 0u)
        << o.str();
    EXPECT_EQ(o.str().find("```"), std::string::npos) << cmd;
    EXPECT_NE(o.str().find("Options"), std::string::npos) << cmd;
    std::ostringstream o2, e2;
    EXPECT_EQ(run({cmd, "-h"}, o2, e2), 0);
    EXPECT_EQ(o2.str(), o.str());
  }
  // check's section, 198 lines of Markdown, is a screen or two on the terminal.
  std::ostringstream check_help, e;
  run({"check", "--help"}, check_help, e);
  const std::string text = check_help.str();
  EXPECT_LT(std::count(text.begin(), text.end(), '\n'), 80) << text;
}

TEST(Help, AnUnknownCommandWithHelpIsAnError) {
  std::ostringstream out, err;
  EXPECT_EQ(run({"frobnicate", "--help"}, out, err), 2);
  EXPECT_EQ(out.str(), "");
  EXPECT_EQ(err.str(), "kjudge: unknown command 'frobnicate'\nRun 'kjudge --help' for usage.\n");
}

TEST(Help, SectionsStopAtTheNextHeading) {
  const auto s = help_section("validate");
  ASSERT_TRUE(s);
  EXPECT_EQ(s->find("## kjudge export"), std::string::npos);
  EXPECT_FALSE(help_section("price"));  // not a command, so no section either
}

}  // namespace
