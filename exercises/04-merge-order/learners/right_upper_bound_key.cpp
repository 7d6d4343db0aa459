// exercises/04-merge-order/learners: gives every entry one key, 2n+1 for local n and 2m for
// a post marked m, and inserts each post after every entry whose key is not above its own
// (chapter 04; a learner's answer the tests must pass).
#include <algorithm>
#include <utility>

#include "post_loop.h"

namespace exercise {

void PostLoop::merge(std::vector<Post>& posts) {
  // Local n runs after posts marked n or below, and before posts marked n+1 or above; a post
  // runs after earlier posts with its mark. So keys 2n+1 and 2m, ties kept in queue order.
  const auto key = [](const Entry& e) { return e.posted ? 2 * e.number : 2 * e.number + 1; };
  for (Post& post : posts) {
    const std::uint64_t k = 2 * post.mark;
    auto at = std::upper_bound(ready_.begin(), ready_.end(), k,
                               [&](std::uint64_t v, const Entry& e) { return v < key(e); });
    ready_.insert(at, Entry{true, post.mark, std::move(post.cb)});
  }
}

}  // namespace exercise
