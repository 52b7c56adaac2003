#include "sim/des/des_engine.h"

#include <mutex>
#include <string>
#include <vector>

#include <simgrid/s4u.hpp>

// SimGrid 3.32 keeps the simulated clock in this static member and never
// resets it when an Engine is destroyed; there is no public setter. Bound by
// its mangled name (libsimgrid exports it) rather than by redeclaring the class.
extern double simgrid_engine_impl_now __asm__("_ZN7simgrid6kernel10EngineImpl4now_E");

// The static signals to which each SimGrid 3.32 engine connects callbacks
// without disconnecting them (its VM model, created with every engine, adds
// one to each: found by counting the slots of every exported s4u signal
// before and after engines). Some are protected or private members, so they
// are bound by name too; xbt::signal is a copyable map of callbacks.
namespace sg_signals {
namespace s4u = simgrid::s4u;
using simgrid::xbt::signal;
extern signal<void(s4u::Activity const&)> activity_completion __asm__("_ZN7simgrid3s4u8Activity13on_completionE");
extern signal<void(s4u::Activity const&)> activity_suspended __asm__("_ZN7simgrid3s4u8Activity12on_suspendedE");
extern signal<void(s4u::Activity const&)> activity_resumed __asm__("_ZN7simgrid3s4u8Activity10on_resumedE");
extern signal<void(s4u::Exec const&)> exec_start __asm__("_ZN7simgrid3s4u4Exec8on_startE");
extern signal<void(s4u::Host const&)> host_state_change __asm__("_ZN7simgrid3s4u4Host15on_state_changeE");
extern signal<void()> platform_created __asm__("_ZN7simgrid3s4u6Engine19on_platform_createdE");
}  // namespace sg_signals

namespace trainsim {

namespace {
std::mutex& EngineMutex() {
  static std::mutex m;
  return m;
}

// Saves the signals above and puts them back when it goes out of scope.
class SignalsRestorer {
 public:
  SignalsRestorer()
      : completion_(sg_signals::activity_completion),
        suspended_(sg_signals::activity_suspended),
        resumed_(sg_signals::activity_resumed),
        exec_start_(sg_signals::exec_start),
        host_state_(sg_signals::host_state_change),
        platform_created_(sg_signals::platform_created) {}
  ~SignalsRestorer() {
    sg_signals::activity_completion = completion_;
    sg_signals::activity_suspended = suspended_;
    sg_signals::activity_resumed = resumed_;
    sg_signals::exec_start = exec_start_;
    sg_signals::host_state_change = host_state_;
    sg_signals::platform_created = platform_created_;
  }
  SignalsRestorer(const SignalsRestorer&) = delete;
  SignalsRestorer& operator=(const SignalsRestorer&) = delete;

 private:
  decltype(sg_signals::activity_completion) completion_, suspended_, resumed_;
  decltype(sg_signals::exec_start) exec_start_;
  decltype(sg_signals::host_state_change) host_state_;
  decltype(sg_signals::platform_created) platform_created_;
};
}  // namespace

long SimgridSignalSlots() {
  return long(sg_signals::activity_completion.get_slot_count()) + sg_signals::activity_suspended.get_slot_count() +
         sg_signals::activity_resumed.get_slot_count() + sg_signals::exec_start.get_slot_count() +
         sg_signals::host_state_change.get_slot_count() + sg_signals::platform_created.get_slot_count();
}

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
    SignalsRestorer signals;  // destroyed after the engine
    simgrid::s4u::Engine engine(&argc, argv.data());
    build();
    engine.run();
    end_s = simgrid::s4u::Engine::get_clock();
  }
  simgrid_engine_impl_now = 0;
  return end_s;
}

}  // namespace trainsim
