/* exercises/03-chained-wake/starter/chain.pml: the starter's pass_wake_on, as in
   starter/pass_wake_on.cpp: nothing is passed on. */
inline pass_wake_on() {
  skip
}
