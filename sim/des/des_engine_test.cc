#include "sim/des/des_engine.h"

#include <gtest/gtest.h>

#include <simgrid/s4u.hpp>

namespace trainsim {
namespace {

double OneTransfer() {
  return RunInFreshEngine([] {
    auto* zone = simgrid::s4u::create_full_zone("z");
    auto* a = zone->create_host("a", 1.0);
    auto* b = zone->create_host("b", 1.0);
    auto* link = zone->create_link("l", 1e9)->set_latency(0)->seal();
    zone->add_route(a->get_netpoint(), b->get_netpoint(), nullptr, nullptr, {simgrid::s4u::LinkInRoute(link)}, true);
    zone->seal();
    simgrid::s4u::Actor::create("sender", a, [a, b] { simgrid::s4u::Comm::sendto(a, b, 2000000000); });
  });
}

TEST(DesEngineTest, EachEngineLeavesSimgridsSignalsAsItFoundThem) {
  OneTransfer();
  const long slots = SimgridSignalSlots();
  for (int i = 0; i < 5; ++i) {
    EXPECT_DOUBLE_EQ(OneTransfer(), 2.0);  // 2 GB over 1 GB/s, the clock reset to 0 each time
    EXPECT_EQ(SimgridSignalSlots(), slots) << "after engine " << i + 2;
  }
}

}  // namespace
}  // namespace trainsim
