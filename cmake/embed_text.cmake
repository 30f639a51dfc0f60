# Turns a text file into a header holding it as a raw string literal (cmake -P script).
# Inputs: INPUT, OUTPUT, SYMBOL. The delimiter cannot occur in Markdown we write.
file(READ ${INPUT} content)
file(WRITE ${OUTPUT} "// Generated from ${INPUT}; do not edit.\n#pragma once\n"
     "inline constexpr const char* ${SYMBOL} = R\"kjudge_md(${content})kjudge_md\";\n")
