// kjudge's entry point: hands the arguments to the CLI library, which does all the work.
#include <iostream>

#include "commands.hpp"

int main(int argc, char** argv) {
  return kj::cli::run(std::vector<std::string>(argv + 1, argv + argc), std::cout, std::cerr);
}
