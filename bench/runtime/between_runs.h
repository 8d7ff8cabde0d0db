// The --between-runs mode of bench_runtime (see between_runs.cpp).
#pragma once

namespace uops::bench {

int between_runs_main(int argc, char** argv);

}  // namespace uops::bench
