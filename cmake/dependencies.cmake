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
# cpp-httplib (Debian's compiled library; its .pc names /usr, so found by path, which works in
# a prefix of unpacked .debs too) for `serve --http`, with the features it was built with.
find_path(HTTPLIB_INCLUDE_DIR httplib.h REQUIRED)
find_library(HTTPLIB_LIBRARY cpp-httplib REQUIRED)
add_library(httplib::httplib UNKNOWN IMPORTED)
set_target_properties(httplib::httplib PROPERTIES IMPORTED_LOCATION ${HTTPLIB_LIBRARY}
  INTERFACE_INCLUDE_DIRECTORIES ${HTTPLIB_INCLUDE_DIR}
  INTERFACE_COMPILE_DEFINITIONS "CPPHTTPLIB_OPENSSL_SUPPORT;CPPHTTPLIB_ZLIB_SUPPORT;CPPHTTPLIB_BROTLI_SUPPORT")
if(KJUDGE_TESTS)
  find_package(GTest REQUIRED)
endif()
