# One static library per component folder (docs/architecture.md, "The component table"):
#
#   sreh_component(core/flows
#     SOURCES flow.cpp graph.cpp runner.cpp      # the folder's .cpp files, listed (no globs)
#     DEPS core/base core/expr                    # the components its files include
#     LIBS fmt::fmt                               # third-party libraries its headers need
#     PRIVATE_LIBS yaml-cpp)                      # third-party libraries only its sources need
#
# makes the library sreh_core_flows (alias sreh::core_flows), linked PUBLIC to the libraries of
# DEPS (so a component's dependencies are stated once, here, and reach whoever links it). A
# component without sources is an INTERFACE library. `.ci/check-layers` checks that DEPS names
# every component the folder's files include, and that no component includes one after it in
# the table's order.
function(sreh_component folder)
  cmake_parse_arguments(PARSE_ARGV 1 C "" "" "SOURCES;DEPS;LIBS;PRIVATE_LIBS")
  if(C_UNPARSED_ARGUMENTS)
    message(FATAL_ERROR "sreh_component(${folder}): unknown arguments ${C_UNPARSED_ARGUMENTS}")
  endif()
  string(REPLACE "/" "_" name "${folder}")
  set(target sreh_${name})
  set(deps)
  foreach(d IN LISTS C_DEPS)
    string(REPLACE "/" "_" dep "${d}")
    list(APPEND deps sreh_${dep})
  endforeach()
  if(C_SOURCES)
    list(TRANSFORM C_SOURCES PREPEND "${PROJECT_SOURCE_DIR}/${folder}/")
    add_library(${target} STATIC ${C_SOURCES})
    target_include_directories(${target} PUBLIC ${PROJECT_SOURCE_DIR})
    target_link_libraries(${target} PUBLIC ${deps} ${C_LIBS} PRIVATE ${C_PRIVATE_LIBS})
    sreh_module(${target})
  else()
    add_library(${target} INTERFACE)
    target_include_directories(${target} INTERFACE ${PROJECT_SOURCE_DIR})
    target_link_libraries(${target} INTERFACE ${deps} ${C_LIBS})
  endif()
  add_library(sreh::${name} ALIAS ${target})
endfunction()
