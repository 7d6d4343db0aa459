// The composition root of this chapter's stage (server/stage.h): its --help line, then one call
// for each part it composes.
#include "server/stage.h"

// [stage.main]
int main(int argc, char** argv) {
  handoff::server::Stage stage{
      "handoff stage 03: the elastic pool: wake only when every thread is parked, and the one that parked last"};
  stage.ring_handoff();
  stage.wake_policy();
  return stage.run(argc, argv);
}
// [stage.main]
