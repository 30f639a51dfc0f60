# kjudge_module(NAME DIRS dir... DEPS ...): a static library from every .cpp in the DIRS, with
# the public headers of include/ and the warning set of the project.
function(kjudge_warnings target)
  target_compile_options(${target} PRIVATE -Wall -Wextra -Wpedantic -Wshadow -Wconversion
                         -Wno-sign-conversion $<$<BOOL:${KJUDGE_WERROR}>:-Werror>
                         # GCC 12 at -O2 reports false -Wrestrict/-Wstringop-* overlaps inside
                         # libstdc++'s std::string (GCC bug 105329); they are not ours.
                         $<$<CXX_COMPILER_ID:GNU>:-Wno-restrict -Wno-stringop-overflow -Wno-stringop-overread>)
endfunction()

function(kjudge_module name)
  cmake_parse_arguments(M "" "" "DIRS;DEPS" ${ARGN})
  set(sources)
  foreach(dir ${M_DIRS})
    file(GLOB dir_sources CONFIGURE_DEPENDS ${PROJECT_SOURCE_DIR}/${dir}/*.cpp)
    list(APPEND sources ${dir_sources})
  endforeach()
  if(NOT sources)  # a module not written yet still configures
    set(sources ${CMAKE_BINARY_DIR}/empty_${name}.cpp)
    file(WRITE ${sources} "// placeholder for an empty module\n")
  endif()
  add_library(${name} STATIC ${sources})
  target_include_directories(${name} PUBLIC ${PROJECT_SOURCE_DIR}/include
                             PRIVATE ${PROJECT_SOURCE_DIR}/src)
  target_link_libraries(${name} PUBLIC kj_fmt ${M_DEPS})
  set_target_properties(${name} PROPERTIES POSITION_INDEPENDENT_CODE ON)
  kjudge_warnings(${name})
endfunction()
