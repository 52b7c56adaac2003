#include "sim/des/des_engine.h"

#include <mutex>
#include <string>
#include <vector>

#include <simgrid/s4u.hpp>

// SimGrid 3.32 keeps the simulated clock in this static member and never
// resets it when an Engine is destroyed; there is no public setter. Bound by
// its mangled name (libsimgrid exports it) rather than by redeclaring the class.
extern double simgrid_engine_impl_now __asm__("_ZN7simgrid6kernel10EngineImpl4now_E");

namespace trainsim {

namespace {
std::mutex& EngineMutex() {
  static std::mutex m;
  return m;
}
}  // namespace

double RunInFreshEngine(const std::function<void()>& build) {
  std::lock_guard<std::mutex> lock(EngineMutex());
  // network/optim:Full re-solves the whole max-min system at each event
  // instead of SimGrid's default lazy update of what changed. A checkpoint
  // write's flows cross every simulated NIC, so during an asynchronous write
  // the lazy update walks all of them at every event anyway: on the
  // reference design the full solve takes a third less CPU and yields the
  // same rates (every example and reference prediction is unchanged).
  std::vector<std::string> args = {"trainsim-des", "--log=root.thres:critical", "--log=xbt_cfg.thres:critical",
                                   "--cfg=network/model:CM02", "--cfg=network/crosstraffic:0", "--cfg=network/optim:Full"};
  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  int argc = int(args.size());
  simgrid_engine_impl_now = 0;
  double end_s = 0;
  {
    simgrid::s4u::Engine engine(&argc, argv.data());
    build();
    engine.run();
    end_s = simgrid::s4u::Engine::get_clock();
  }
  simgrid_engine_impl_now = 0;
  return end_s;
}

}  // namespace trainsim
