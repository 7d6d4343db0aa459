// Catch2's main, compiled once and linked into every test binary of the project (chapter 01).
#define CATCH_CONFIG_MAIN
#include <catch2/catch.hpp>
