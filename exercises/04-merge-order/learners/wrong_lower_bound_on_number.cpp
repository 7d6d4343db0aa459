// exercises/04-merge-order/learners: binary-searches the ready queue by number for the
// first entry numbered the mark or above, local or posted
// (chapter 04; a learner's answer the tests must fail).
#include <algorithm>
#include <utility>

#include "post_loop.h"

namespace exercise {

void PostLoop::merge(std::vector<Post>& posts) {
  for (Post& post : posts) {
    // ready_ is sorted by number: the post goes before the first entry numbered its mark or above.
    auto at = std::lower_bound(ready_.begin(), ready_.end(), post.mark,
                               [](const Entry& e, std::uint64_t mark) { return e.number < mark; });
    ready_.insert(at, Entry{true, post.mark, std::move(post.cb)});
  }
}

}  // namespace exercise
