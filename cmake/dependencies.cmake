# Every dependency is a Debian package (tools/setup installs them); nothing is fetched at build time.
find_package(fmt REQUIRED)
find_package(OpenSSL REQUIRED)  # SHA-256 for problem hashes and cache keys
find_package(nlohmann_json 3.10 REQUIRED)
# Config packages first: they are relocatable, so a prefix of unpacked .debs works too
# (tools/gpu-check builds that way on a machine with no package registry).
find_package(tomlplusplus CONFIG QUIET)
if(NOT TARGET tomlplusplus::tomlplusplus)
  find_package(PkgConfig REQUIRED)
  pkg_check_modules(TOMLPP REQUIRED IMPORTED_TARGET tomlplusplus)
  add_library(tomlplusplus::tomlplusplus ALIAS PkgConfig::TOMLPP)
endif()
find_package(CLI11 CONFIG QUIET)
if(NOT CLI11_FOUND)
  find_path(CLI11_INCLUDE_DIR CLI/CLI.hpp REQUIRED)
  add_library(CLI11::CLI11 INTERFACE IMPORTED)
  target_include_directories(CLI11::CLI11 INTERFACE ${CLI11_INCLUDE_DIR})
endif()
if(KJUDGE_TESTS)
  find_package(GTest REQUIRED)
endif()
