# INTERFACE targets that carry the warning and sanitizer flags, so every
# target that links them is built the same way.
add_library(taskd_warnings INTERFACE)
target_compile_options(taskd_warnings INTERFACE -Wall -Wextra -Wpedantic -Wshadow -Wconversion -Wno-sign-conversion)

add_library(taskd_sanitizers INTERFACE)
if(TASKD_SANITIZE)
  target_compile_options(taskd_sanitizers INTERFACE -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=undefined)
  target_link_options(taskd_sanitizers INTERFACE -fsanitize=address,undefined)
endif()
