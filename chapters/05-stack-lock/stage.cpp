// The composition root of this chapter's stage (server/stage.h): its --help line, then one call
// for each part it composes (chapter 05).
#include "server/stage.h"

using handoff::server::Stage;

int main(int argc, char** argv) {
  Stage stage{"handoff stage 05: --topology shard|pool, --stack shared|per-worker and the stack lock's switches"};
  stage.ring_handoff();
  stage.wake_policy();
  stage.event_loop();
  stage.upstream();
  stage.topology();
  stage.stack_model();
  return stage.run(argc, argv);
}
