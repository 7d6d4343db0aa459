// evloop/post_queue: call_soon_threadsafe's way in: posts from any thread, each stamped
// with the loop's local count, straight into the running loop's hands (chapter 04).
// The code is the template's, in the header; the product's instance is compiled here once.
#include "evloop/post_queue.h"

namespace handoff::evloop {

template class BasicPostQueue<>;

}  // namespace handoff::evloop
