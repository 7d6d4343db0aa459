// sync/announce_order: the order of a waiter's two steps before it blocks (chapter 02; one
// definition for the pool threads', the pool loop's and the callback loop's since issue 26).
// Role: every wait in this project that can lose a wake is the store-buffering shape: the
// waiter announces that it is about to block (a store), fences, and re-checks the queue it
// waits on (a load); the producer pushes (a store), fences, and reads the announcement (a
// load). Only announce_then_recheck is correct. The reverse is kept, selected by a test
// seam and never by a flag, as the negative control each side's lost-wake tests and models
// catch: a push that lands between the re-check and the announcement sees no waiter and
// sends no wake, and the waiter blocks with work queued.
#pragma once

namespace handoff::sync {

/// A waiter's two steps before it blocks, in the order it takes them.
enum class AnnounceOrder { announce_then_recheck, recheck_then_announce };

}  // namespace handoff::sync
