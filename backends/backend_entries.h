// Internal to backends/: each backend's registry entry (uops/backends/backends.h), defined in
// its own folder and listed once in backends.cpp.
#pragma once

#include "uops/backends/backends.h"

namespace uops {

Backend interpreter_backend();
Backend c_backend();
Backend cuda_backend();

}  // namespace uops
