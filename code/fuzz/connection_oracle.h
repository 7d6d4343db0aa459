// fuzz/connection_oracle: what the connection target's client must have received (chapter 01).
// Role: hold the bytes the client received against the bytes it sent, after the run: the
// answers, read strictly (http/response_reader), must be one final answer per request, in
// order, each its own; see connection_fuzz.cpp for the invariants in full.
#pragma once

#include <cstddef>
#include <limits>
#include <string_view>

#include "http/request_parser.h"

namespace handoff::fuzz {

/// before_clock when the clock never moved.
inline constexpr std::size_t kClockNeverMoved = std::numeric_limits<std::size_t>::max();

/// What one run's client sent and received, and what excuses an answer cut short.
struct Transcript {
  const http::Limits& limits;                   ///< the server's request limits
  std::string_view sent;                        ///< every byte the socket took: all the server can read
  std::string_view got;                         ///< every byte received
  bool eof = false;                             ///< the server ended the connection
  std::size_t before_clock = kClockNeverMoved;  ///< bytes received before the clock first moved
  bool cut_excused = false;                     ///< answers may be cut short (the client stopped reading, a drain)
  bool drain_requested = false;                 ///< the server was told to drain
};

/// Abort (through fail()) at the first invariant the transcript breaks.
void check_answers(const Transcript& t);

}  // namespace handoff::fuzz
