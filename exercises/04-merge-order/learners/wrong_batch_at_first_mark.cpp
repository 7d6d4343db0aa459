// exercises/04-merge-order/learners: places the turn's posts as one block, in their order,
// where the first of them belongs
// (chapter 04; a learner's answer the tests must fail).
#include <algorithm>
#include <utility>

#include "post_loop.h"

namespace exercise {

void PostLoop::merge(std::vector<Post>& posts) {
  if (posts.empty()) return;
  const std::uint64_t first = posts.front().mark;
  auto at = std::find_if(ready_.begin(), ready_.end(), [&](const Entry& e) { return !e.posted && e.number >= first; });
  for (Post& post : posts) {
    at = ready_.insert(at, Entry{true, post.mark, std::move(post.cb)});
    ++at;  // the next post goes behind this one
  }
}

}  // namespace exercise
