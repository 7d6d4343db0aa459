// exercises/03-chained-wake/starter: compiles, and passes nothing on.
#include "lane.h"

namespace exercise {

void Lane::pass_wake_on() {
  // A taker has just taken a job. Chapter 02's lane does nothing here, and a poke eaten by
  // an awake taker's look at the socket leaves its parked sibling asleep.
}

}  // namespace exercise
