#include "cli/app.hpp"

int main(int argc, char** argv) { return taskd::cli::taskd_main(argc, argv); }
