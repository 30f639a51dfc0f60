# Every dependency is a Debian package (tools/setup installs them); nothing is fetched at build time.
# What the judge library links is built here or static (fmt, toml++, libcrypto, libseccomp;
# NVRTC and the driver are opened at run time), so the Python extension built from it needs
# nothing at run time beyond the C and C++ runtimes: a wheel loads wherever torch does, and no
# Debian-only library (libfmt.so.9, libtomlplusplus.so.3) has to be on the user's machine.
# fmt: its headers, and its compiled part built here (src/fmt_library.cpp) instead of libfmt.so.
find_path(FMT_INCLUDE_DIR fmt/format-inl.h REQUIRED)
add_library(kj_fmt STATIC ${PROJECT_SOURCE_DIR}/src/fmt_library.cpp)
target_include_directories(kj_fmt SYSTEM PUBLIC ${FMT_INCLUDE_DIR})
set_target_properties(kj_fmt PROPERTIES POSITION_INDEPENDENT_CODE ON)
set(OPENSSL_USE_STATIC_LIBS TRUE)
find_package(OpenSSL REQUIRED)  # SHA-256 for problem hashes and cache keys
find_package(nlohmann_json 3.10 REQUIRED)
# Config packages first: they are relocatable, so a prefix of unpacked .debs works too
# (tools/gpu-check builds that way on a machine with no package registry).
# toml++ as the header-only library it also is (its compiled form is Debian's shared object).
find_path(TOMLPP_INCLUDE_DIR toml++/toml.h REQUIRED)
add_library(kj_tomlplusplus INTERFACE)
target_include_directories(kj_tomlplusplus SYSTEM INTERFACE ${TOMLPP_INCLUDE_DIR})
target_compile_definitions(kj_tomlplusplus INTERFACE TOML_HEADER_ONLY=1)
add_library(tomlplusplus::tomlplusplus ALIAS kj_tomlplusplus)
# libseccomp's archive (libseccomp-dev ships it beside the shared object).
find_library(SECCOMP_STATIC_LIBRARY libseccomp.a REQUIRED)
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
