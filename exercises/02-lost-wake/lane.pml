/* exercises/02-lost-wake/lane.pml: one submit racing one park, over memory that keeps each
   thread's stores in a store buffer until they drain (any moment) or a fence drains them.
   That is the store buffering every processor does, x86 included; the C++ memory model
   allows it and more to relaxed operations. The park itself is park.pml, found in
   starter/ or solution/ (the build passes -I). A lost wake is an invalid end state: the
   taker blocked in poll() for good, with the job in the ring.
   Run by hand:  spin -a -E-Isolution lane.pml && cc -DSAFETY -o pan pan.c && ./pan */

bit ring;         /* memory: 1 once the submitter's push is visible to the taker */
bit parked;       /* memory: 1 once the taker's announcement is visible to the submitter */
bit ring_held;    /* the submitter's push, still in its store buffer */
bit parked_held;  /* the taker's announcement, still in its store buffer */
byte wake;        /* the eventfd's count */
bit got;          /* the taker has the job */

/* The taker's steps; park.pml puts them in order. */
inline announce() { parked_held = 1 }                      /* parked_.fetch_add(1, relaxed) */
inline fence() { !parked_held }                            /* seq_cst fence: wait until drained */
inline recheck() { if :: ring -> got = 1 :: else -> skip fi }  /* ring_.try_pop(job) */
inline block() { if :: got -> skip :: else -> wake > 0; got = 1 fi }  /* poll() on the eventfd */

#include "park.pml"

/* A buffered store reaches memory whenever the processor gets round to it. */
active proctype memory() {
end:
  do
  :: atomic { ring_held -> ring = 1; ring_held = 0 }
  :: atomic { parked_held -> parked = 1; parked_held = 0 }
  od
}

/* Lane::submit, given: push, fence, read parked_, poke the eventfd if anyone is parked. */
active proctype submitter() {
  ring_held = 1;
#ifndef SUBMIT_WITHOUT_FENCE
  !ring_held;  /* the seq_cst fence in submit(), between the push and the read of parked_ */
#endif
  if
  :: parked -> atomic { !ring_held; wake++ }  /* write(2): a system call drains the buffer */
  :: else -> skip
  fi
}

/* Lane::take, from the moment its first try_pop found the ring empty. */
active proctype taker() {
  park();
  assert(got)
}
