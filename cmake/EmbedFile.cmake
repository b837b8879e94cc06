# embed_file(INPUT OUTPUT SYMBOL): generates a header that defines
# `inline constexpr std::string_view SYMBOL` holding INPUT's bytes, so the
# file stays the single source and the binary needs nothing beside it.
function(embed_file input output symbol)
  add_custom_command(
    OUTPUT ${output}
    COMMAND ${CMAKE_COMMAND} -DINPUT=${input} -DOUTPUT=${output} -DSYMBOL=${symbol}
            -P ${CMAKE_SOURCE_DIR}/cmake/EmbedFileScript.cmake
    DEPENDS ${input} ${CMAKE_SOURCE_DIR}/cmake/EmbedFileScript.cmake
    COMMENT "Embedding ${input}")
endfunction()
