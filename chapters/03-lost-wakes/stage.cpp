// The composition root of this chapter's stage (server/stage.h): its --help line, then one call
// for each part it composes (chapter 03).
#include "server/stage.h"

using handoff::server::Stage;

int main(int argc, char** argv) {
  Stage stage{"handoff stage 03: the elastic pool: wake only when every thread is parked, the one that parked last"};
  stage.ring_handoff();
  stage.wake_policy();
  return stage.run(argc, argv);
}
