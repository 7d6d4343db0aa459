// The composition root of this chapter's stage (server/stage.h): its --help line, then one call
// for each part it composes (chapter 06).
#include "server/stage.h"

using handoff::server::Stage;

int main(int argc, char** argv) {
  Stage stage{"handoff stage 06: the full system, every chapter's winner on by default; --like, --config, /metrics"};
  stage.ring_handoff();
  stage.wake_policy();
  stage.event_loop();
  stage.upstream();
  stage.topology();
  stage.stack_model();
  stage.full_system_defaults();
  stage.config_files(HANDOFF_PROFILE_DIR);
  stage.metrics();
  return stage.run(argc, argv);
}
