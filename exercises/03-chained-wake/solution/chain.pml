/* exercises/03-chained-wake/solution/chain.pml: work left in the ring after the pop, so a
   parked sibling with no wake on its way gets one, by submit's own rule. */
inline pass_wake_on() {
  if
  :: pushed > popped -> wake_one_if_parked()
  :: else -> skip
  fi
}
