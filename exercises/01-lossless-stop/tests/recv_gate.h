// exercises/01-lossless-stop/tests: a gate in front of the pool's recv() (issue 42).
// Role: force, whatever the learner's code looks like, the interleaving in which a thread
// idle in recv() is slower to its end message than a busy sibling that has just finished
// its job. The test binary defines recv() itself (recv_gate.cpp), so every recv() the pool
// makes, blocking or not, passes through here; it takes the datagram with recvfrom(), which
// the gate leaves alone. Disarmed, a blocking recv() is the system call. Armed, a blocking
// recv() waits in poll() and, before it takes anything, is held while a thread other than
// the holder (the one running the test's job) is still to say what it does after that job:
// the holder lets it go when it makes a blocking recv() of its own (it waits its turn in the
// queue like everybody), when a non-blocking recv() finds the lane empty (it has drained
// what was there), or when its thread ends. send() is counted (sendto() sends it), so the
// test can let its job end once stop() has sent its end messages. A stop whose busy thread
// drains the lane without blocking thus takes its idle sibling's end message every run, and
// stop() hangs.
#pragma once

namespace exercise::recv_gate {

/// From now on, blocking recv()s go through the gate (until disarm()).
void arm();
void disarm();
/// Called by the test's job on its pool thread: this thread is the holder.
void hold_others();
/// The datagrams send() has sent since arm().
int sends();

}  // namespace exercise::recv_gate
