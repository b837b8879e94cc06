file(READ ${INPUT} content HEX)
string(REGEX REPLACE "([0-9a-f][0-9a-f])" "'\\\\x\\1'," bytes "${content}")
file(WRITE ${OUTPUT} "// Generated from ${INPUT}; do not edit.\n#pragma once\n#include <string_view>\n"
  "inline constexpr char ${SYMBOL}_bytes[] = {${bytes}};\n"
  "inline constexpr std::string_view ${SYMBOL}{${SYMBOL}_bytes, sizeof(${SYMBOL}_bytes)};\n")
