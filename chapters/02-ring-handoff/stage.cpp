// The composition root of this chapter's stage (server/stage.h): its --help line, then one call
// for each part it composes (chapter 02).
#include "server/stage.h"

using handoff::server::Stage;

int main(int argc, char** argv) {
  Stage stage{"handoff stage 02: the hand-off in Vyukov rings, spin-then-park, wake only a parked thread"};
  stage.ring_handoff();
  return stage.run(argc, argv);
}
