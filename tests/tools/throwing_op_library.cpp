// An op library whose entry point throws something that is not a std::exception: uopc must
// say which library failed (exit 2), not abort.
extern "C" int uops_register_ops(int) {
  throw 42;
}
