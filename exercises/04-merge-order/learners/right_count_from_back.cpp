// exercises/04-merge-order/learners: counts from the back: the local callbacks queued since
// a post read its mark (the loop's count now, less the mark) are all still queued, and last
// (chapter 04; a learner's answer the tests must pass).
#include <cstddef>
#include <utility>

#include "post_loop.h"

namespace exercise {

void PostLoop::merge(std::vector<Post>& posts) {
  // A local callback numbered the mark or above was queued after the post, and cannot have run
  // before this turn took the post; the ones queued in this turn's generation are behind
  // everything, so they are the last (count - mark) entries, and the post goes just before.
  // relaxed: the loop thread is the only writer of the count.
  const std::uint64_t count = local_count_.load(std::memory_order_relaxed);
  for (Post& post : posts) {
    const auto later = static_cast<std::ptrdiff_t>(count - post.mark);
    ready_.insert(ready_.end() - later, Entry{true, post.mark, std::move(post.cb)});
  }
}

}  // namespace exercise
