# The render stage: HTML report, SVG charts, Markdown. Templates and CSS are
# compiled in (cmake/embed.cmake), so the binary needs no files at run time.
set(TALLY_ASSETS ${PROJECT_SOURCE_DIR}/templates/report.html ${PROJECT_SOURCE_DIR}/assets/report.css)
add_custom_command(
  OUTPUT ${CMAKE_CURRENT_BINARY_DIR}/tally_assets.c
  COMMAND ${CMAKE_COMMAND} -DOUT=${CMAKE_CURRENT_BINARY_DIR}/tally_assets.c
          "-DNAMES=tl_asset_report_html\\;tl_asset_report_css" "-DFILES=${PROJECT_SOURCE_DIR}/templates/report.html\\;${PROJECT_SOURCE_DIR}/assets/report.css"
          -P ${PROJECT_SOURCE_DIR}/cmake/embed.cmake
  DEPENDS ${TALLY_ASSETS} ${PROJECT_SOURCE_DIR}/cmake/embed.cmake
  COMMENT "Embedding the report template and CSS")
file(GLOB TALLY_RENDER_SOURCES CONFIGURE_DEPENDS ${CMAKE_CURRENT_SOURCE_DIR}/render/*.c)
# term.c is tally_analyze's (the console escaping every command shares)
list(REMOVE_ITEM TALLY_RENDER_SOURCES ${CMAKE_CURRENT_SOURCE_DIR}/render/term.c)
add_library(tally_render STATIC ${TALLY_RENDER_SOURCES} ${CMAKE_CURRENT_BINARY_DIR}/tally_assets.c)
target_include_directories(tally_render PUBLIC ${CMAKE_CURRENT_SOURCE_DIR}/render)
target_link_libraries(tally_render PUBLIC tally_analyze PRIVATE tally_warnings)

# C++ names in traces (CUDA kernels) may be mangled; labels.c demangles them
# with libiberty's cplus_demangle_v3 (Debian: libiberty-dev, a static C
# library, so no C++ runtime is needed). Without it names stay as they are.
find_path(TALLY_DEMANGLE_INCLUDE demangle.h PATH_SUFFIXES libiberty)
find_library(TALLY_IBERTY_LIBRARY NAMES iberty)
if(TALLY_DEMANGLE_INCLUDE AND TALLY_IBERTY_LIBRARY)
  target_compile_definitions(tally_render PRIVATE TALLY_HAVE_LIBIBERTY)
  target_include_directories(tally_render PRIVATE ${TALLY_DEMANGLE_INCLUDE})
  target_link_libraries(tally_render PRIVATE ${TALLY_IBERTY_LIBRARY})
else()
  message(STATUS "libiberty not found: C++ names are shown mangled (install libiberty-dev)")
endif()
