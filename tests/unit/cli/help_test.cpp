// docs/cli.md is the source of --help. These tests keep it and the parser from drifting: every
// registered command has a `## kjudge COMMAND` section and every section a command, every
// option a command registers is named in its section, and --help prints exactly that text.
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
            (std::set<std::string>{"validate", "export", "cases", "compare", "check", "bench", "serve"}));
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

TEST(Help, HelpPrintsTheSectionsVerbatim) {
  std::ostringstream out, err;
  EXPECT_EQ(run({"--help"}, out, err), 0);
  EXPECT_EQ(out.str(), help_overview());
  EXPECT_EQ(out.str().rfind("# kjudge command line", 0), 0u);
  EXPECT_EQ(out.str().find("## kjudge"), std::string::npos);  // the overview only
  for (const char* cmd : {"validate", "export", "cases", "compare", "check"}) {
    std::ostringstream o, e;
    EXPECT_EQ(run({cmd, "--help"}, o, e), 0) << e.str();
    EXPECT_EQ(o.str(), *help_section(cmd)) << cmd;
    EXPECT_EQ(o.str().rfind(std::string("## kjudge ") + cmd, 0), 0u) << o.str();
    std::ostringstream o2, e2;
    EXPECT_EQ(run({cmd, "-h"}, o2, e2), 0);
    EXPECT_EQ(o2.str(), o.str());
  }
}

TEST(Help, SectionsStopAtTheNextHeading) {
  const auto s = help_section("validate");
  ASSERT_TRUE(s);
  EXPECT_EQ(s->find("## kjudge export"), std::string::npos);
  EXPECT_FALSE(help_section("mutate"));  // not a command yet, so no section either
}

}  // namespace
