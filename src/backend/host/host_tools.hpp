// Running the host toolchain, shared by host_build.cpp (the candidate's build), host_module.cpp
// (addr2line for a finding's place) and host_tools.cpp, which defines these: a plain run, the
// confined run of one build step, and the reading of what they leave. Private to
// src/backend/host.
#pragma once

#include <filesystem>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "kjudge/host_backend.hpp"

namespace kj::detail {

std::string read_file(const std::filesystem::path& p);

// Runs argv with stdout and stderr into `log`; the exit status (-1 if it could not start).
int run(const std::vector<std::string>& argv, const std::filesystem::path& log);

// The absolute path of `program` as kjudge's PATH finds it (the compile itself gets no PATH).
std::filesystem::path resolve_program(const std::string& program);

// Runs one step of a candidate's host build (the preprocessor, the compiler, objcopy, the
// linker), confined unless a test says otherwise; its messages are returned. Past the deadline
// or the memory cap it throws HostCompileLimit naming the limit, on any other failure a
// CompileError that says `refusal` and carries the messages. `remove` runs before a throw.
std::string run_host_tool(const std::vector<std::string>& argv, const std::filesystem::path& log,
                          const std::filesystem::path& build_dir,
                          const HostCompileOptions& options, std::string_view file_name,
                          std::string_view refusal, const std::function<void()>& remove = {});

// Where a coverage build keeps its notes (gcov's .gcno): beside its shared object.
std::filesystem::path coverage_notes(const std::filesystem::path& shared_object);

} // namespace kj::detail
