/* exercises/03-chained-wake/lane.pml: two takers on one lane with one shared wake socket,
   and a submitter of two jobs, over every interleaving. The steal is not a reordering, so
   memory here is sequentially consistent; what the model searches is the order of the
   threads' steps. A taker that is awake may look at the socket and take any poke it finds
   (poll_lane), and a job's handler may hold its taker for the rest of the run. The chained
   wake itself is chain.pml, found in starter/ or solution/ (the build passes -I). A lost
   wake is an invalid end state: a taker blocked for good with a job in the ring.
   Run by hand:  spin -a -E-Isolution lane.pml && cc -DSAFETY -o pan pan.c && ./pan */

#define NJOBS 2
byte pushed;        /* jobs pushed */
byte popped;        /* jobs taken */
byte parked;        /* the word's high half: takers counted parked */
byte wakes;         /* the word's low half: pokes sent and not yet taken */
chan sock = [4] of { bit };  /* the shared eventfd: one read takes one poke */
byte blocked;       /* takers blocked in poll() */

/* Lane::wake_one_if_parked(), given: poke while the parked outnumber the wakes in flight. */
inline wake_one_if_parked() {
  atomic {
    if
    :: parked > wakes -> wakes++; sock!1
    :: else -> skip
    fi
  }
}

#include "chain.pml"

active proctype submitter() {
  byte n;
  do
  :: n < NJOBS -> atomic { pushed++; n++ }; wake_one_if_parked()
  :: else -> break
  od
}

active [2] proctype taker() {
  bit got;
  do
  :: /* poll_lane(): an awake taker takes every poke it finds, now or not this time */
     if
     :: do
        :: atomic { sock?_ -> wakes-- }
        :: empty(sock) -> break
        od
     :: skip
     fi;
     atomic { if :: pushed > popped -> popped++; got = 1 :: else -> got = 0 fi };
     if
     :: !got ->
        /* park(): announce, re-check, block; leave the count and give back the credit */
        parked++;
        atomic { if :: pushed > popped -> popped++; got = 1; parked-- :: else -> skip fi };
        if
        :: !got ->
           blocked++;
end_block:
           atomic { sock?_ -> blocked--; parked--; wakes-- }
        :: else -> skip
        fi
     :: else -> skip
     fi;
     if
     :: got ->
        pass_wake_on();
        got = 0;
        if
        :: skip                        /* the handler returns */
        :: true -> end_hold: false     /* a long handler: holds its taker */
        fi
     :: else -> skip
     fi
  od
}

/* The property, where nothing can move any more. */
active proctype quiescence() {
  timeout -> assert(blocked == 0 || pushed == popped)
}
