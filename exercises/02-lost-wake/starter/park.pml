/* exercises/02-lost-wake/starter/park.pml: the starter's order, as in starter/park.cpp. */
inline park() {
  recheck();
  announce();
  block()
}
