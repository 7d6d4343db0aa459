// Catch2's main, compiled once and linked into every test binary of the project.
#define CATCH_CONFIG_MAIN
#include <catch2/catch.hpp>
