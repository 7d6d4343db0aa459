// The composition root of this chapter's stage (server/stage.h): its --help line, then one call
// for each part it composes (chapter 04).
#include "server/stage.h"

using handoff::server::Stage;

int main(int argc, char** argv) {
  Stage stage{"handoff stage 04: the worker's loop is a callback event loop; --turn picks a turn's shape"};
  stage.ring_handoff();
  stage.wake_policy();
  stage.event_loop();
  stage.upstream();
  return stage.run(argc, argv);
}
