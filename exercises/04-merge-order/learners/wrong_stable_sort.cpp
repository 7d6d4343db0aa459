// exercises/04-merge-order/learners: appends the posts and sorts the ready queue by number
// (chapter 04; a learner's answer the tests must fail).
#include <algorithm>

#include "post_loop.h"

namespace exercise {

void PostLoop::merge(std::vector<Post>& posts) {
  for (Post& post : posts) ready_.push_back(Entry{true, post.mark, std::move(post.cb)});
  // Everything by its number; a stable sort keeps the order of equal numbers.
  std::stable_sort(ready_.begin(), ready_.end(), [](const Entry& a, const Entry& b) { return a.number < b.number; });
}

}  // namespace exercise
