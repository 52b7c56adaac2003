#include "sim/run/cost_model.h"

#include <gtest/gtest.h>

#include "sim/io/scenario_loader.h"
#include "sim/run/simulate.h"

namespace trainsim {
namespace {

FabricProfile Fabric(FabricTopology t, int radix, int nodes_per_su) {
  FabricProfile f;
  f.topology = t;
  f.switch_radix = radix;
  f.nodes_per_su = nodes_per_su;
  return f;
}

TEST(CostModelTest, RailOptimizedFabricIsOneLeafPerRailPerScalableUnitPlusSpines) {
  const FabricProfile f = Fabric(FabricTopology::kRailOptimized, 64, 32);
  // 128 nodes x 8 rails: 4 SUs x 8 leaves; 1024 uplinks over 64-port spines.
  FabricPorts p = FabricFor(f, 128, 8);
  EXPECT_EQ(p.leaves, 32);
  EXPECT_EQ(p.spines, 16);
  EXPECT_EQ(p.cores, 0);
  EXPECT_EQ(p.node_links, 1024);
  EXPECT_EQ(p.switch_links, 1024);
  // 32 nodes x 4 rails: 4 leaves (one per rail), 128 uplinks over two spines.
  p = FabricFor(f, 32, 4);
  EXPECT_EQ(p.leaves, 4);
  EXPECT_EQ(p.spines, 2);
  EXPECT_EQ(p.node_links, 128);
  // 16 nodes x 4 rails, 64 ports: one switch takes them all, no spine.
  p = FabricFor(f, 16, 4);
  EXPECT_EQ(p.switches(), 1);
  EXPECT_EQ(p.switch_links, 0);
  EXPECT_EQ(p.node_links, 64);
  // Halving the NICs halves every count at 128 nodes.
  p = FabricFor(f, 128, 4);
  EXPECT_EQ(p.leaves, 16);
  EXPECT_EQ(p.spines, 8);
  EXPECT_EQ(p.node_links + p.switch_links, 1024);
}

TEST(CostModelTest, FatTreeFitsOneSwitchThenLeavesOfHalfTheRadix) {
  const FabricProfile f = Fabric(FabricTopology::kFatTree, 40, 20);
  FabricPorts p = FabricFor(f, 5, 8);  // 40 ports: one switch
  EXPECT_EQ(p.switches(), 1);
  EXPECT_EQ(p.switch_links, 0);
  p = FabricFor(f, 10, 8);  // 80 ports: 4 leaves of 20, 80 uplinks over 40-port spines
  EXPECT_EQ(p.leaves, 4);
  EXPECT_EQ(p.spines, 2);
  EXPECT_EQ(p.switch_links, 80);
}

TEST(CostModelTest, MoreLeavesThanASpineHasPortsAddsACoreTier) {
  const FabricProfile f = Fabric(FabricTopology::kRailOptimized, 64, 32);
  const FabricPorts p = FabricFor(f, 512, 8);  // 128 leaves > 64 spine ports
  EXPECT_EQ(p.leaves, 128);
  EXPECT_EQ(p.spines, 4096 / 32);
  EXPECT_EQ(p.cores, 4096 / 64);
  EXPECT_EQ(p.switch_links, 2 * 4096);
}

// The unit the collectives, the DES and the capital share: all the nodes
// under one switch; a rail leaf holds at most half its radix of nodes, so a
// profile's larger unit buys (and crosses) spines every radix / 2 nodes.
TEST(CostModelTest, ScalableUnitsAreWhatTheSwitchesBuy) {
  FabricProfile f = Fabric(FabricTopology::kRailOptimized, 64, 32);
  EXPECT_EQ(ScalableUnitNodes(f, 8, 8), 8);    // 64 ports: one switch, however small the profile's unit
  f.nodes_per_su = 1;
  EXPECT_EQ(ScalableUnitNodes(f, 8, 8), 8);
  EXPECT_EQ(ScalableUnitNodes(f, 9, 8), 1);    // 72 ports: the profile's unit
  f.nodes_per_su = 64;
  EXPECT_EQ(ScalableUnitNodes(f, 128, 8), 32);  // a rail leaf of 64 ports takes 32 nodes
  EXPECT_EQ(FabricFor(f, 128, 8).leaves, 32);
  const FabricProfile fat = Fabric(FabricTopology::kFatTree, 40, 20);
  EXPECT_EQ(ScalableUnitNodes(fat, 5, 8), 5);
  EXPECT_EQ(ScalableUnitNodes(fat, 64, 8), 20);
}

TEST(CostModelTest, OneNodeNeedsNoFabric) {
  const FabricPorts p = FabricFor(Fabric(FabricTopology::kRailOptimized, 64, 32), 1, 8);
  EXPECT_EQ(p.switches(), 0);
  EXPECT_EQ(p.node_links, 0);
}

TEST(CostModelTest, AmortizationIsStraightLine) {
  EXPECT_DOUBLE_EQ(AmortizedUsd(4 * 8760.0, 4, 1), 1.0);
  EXPECT_DOUBLE_EQ(AmortizedUsd(1e6, 4, 4 * 8760), 1e6);
  EXPECT_DOUBLE_EQ(AmortizedUsd(1e6, 4, 6 * 8760), 1e6);  // written off after 4 years: the rest is energy alone
  EXPECT_DOUBLE_EQ(AmortizedUsd(1e6, 0, 10), 0);
}

Scenario Ref70b16(std::vector<std::string> sets) {
  auto s = LoadScenario(std::string(TRAINSIM_SOURCE_DIR) + "/examples/reference-design/llama2-70b-16n-8nic.yaml", sets);
  EXPECT_TRUE(s.ok()) << s.error().ToString();
  return *s;
}

TEST(CostModelTest, CapitalIsTheSumOfItsPartsFromTheProfiles) {
  const Scenario s = Ref70b16({"cost.model=ownership"});
  const CapitalCost c = ClusterCapital(s);
  EXPECT_DOUBLE_EQ(c.nodes_usd, 16 * s.node.capital_usd);
  EXPECT_DOUBLE_EQ(c.nics_usd, 16 * 8 * s.node.nic_capital_usd);
  EXPECT_EQ(c.fabric.switches(), 8 + 2);
  EXPECT_DOUBLE_EQ(c.switches_usd, 10 * s.fabric.switch_capital_usd);
  EXPECT_DOUBLE_EQ(c.links_usd, (128 + 128) * s.fabric.link_capital_usd);
  EXPECT_DOUBLE_EQ(c.storage_usd, 4 * s.storage->capital_usd);
  // Four NICs per node save the adapters, and their 64 ports fit one switch:
  // 64 node links and no spine (of 256 links and 10 switches).
  const CapitalCost c4 = ClusterCapital(Ref70b16({"cost.model=ownership", "cluster.nics_per_node=4"}));
  EXPECT_EQ(c4.fabric.switches(), 1);
  EXPECT_DOUBLE_EQ(c.total_usd() - c4.total_usd(),
                   64 * s.node.nic_capital_usd + 192 * s.fabric.link_capital_usd + 9 * s.fabric.switch_capital_usd);
}

// A rack-scale system is bought by the rack: 16 GB200 trays are one NVL72
// rack of 18 (two trays idle: spares), 19 are two racks.
TEST(CostModelTest, RackScaleNodesAreBoughtAsWholeRacks) {
  const std::string file = std::string(TRAINSIM_SOURCE_DIR) + "/examples/blackwell/llama3.1-70b-xe9712-gb200-16n.yaml";
  auto s = LoadScenario(file, {"cost.model=ownership"});
  ASSERT_TRUE(s.ok()) << s.error().ToString();
  ASSERT_EQ(s->node.nvlink_domain_nodes(), 18);
  const CapitalCost c = ClusterCapital(*s);
  EXPECT_EQ(c.bought_nodes, 18);
  EXPECT_DOUBLE_EQ(c.nodes_usd, 18 * s->node.capital_usd);
  EXPECT_DOUBLE_EQ(c.nics_usd, 18.0 * s->node.nics_per_node * s->node.nic_capital_usd);
  s->nodes = 19;
  EXPECT_EQ(ClusterCapital(*s).bought_nodes, 36);
  // An HGX node is its own domain: the job's nodes are what is bought.
  EXPECT_EQ(ClusterCapital(Ref70b16({"cost.model=ownership"})).bought_nodes, 16);
}

TEST(CostModelTest, OwnershipChargesTheWallTimesShareOfCapitalPlusEnergyAtPue) {
  const Scenario s = Ref70b16({"cost.model=ownership"});
  RunReport run;
  run.time_to_train_s = 10 * 3600;
  run.energy_kwh = 2000;
  run.tokens = 1e9;
  ApplyCostModel(s, run);
  EXPECT_EQ(run.cost_model, "ownership");
  const double capital = ClusterCapital(s).total_usd();
  EXPECT_DOUBLE_EQ(run.capital_usd, capital);
  const SiteProfile& site = s.cost.site;
  EXPECT_GE(site.pue, 1.0);
  EXPECT_NEAR(run.cost_usd, capital * 10 / (site.amortization_years * 8760) + 2000 * site.pue * site.electricity_usd_per_kwh, 1e-6);
  EXPECT_DOUBLE_EQ(run.cost_per_billion_tokens_usd, run.cost_usd);
}

TEST(CostModelTest, RentalIsTheNodeHourPriceAndStillReportsCapital) {
  const Scenario s = Ref70b16({});
  RunReport run;
  run.time_to_train_s = 3600;
  ApplyCostModel(s, run);
  EXPECT_EQ(run.cost_model, "rental");
  EXPECT_DOUBLE_EQ(run.cost_usd, 16 * s.node.node_hour_usd + 4 * s.storage->node_hour_usd);
  EXPECT_GT(run.capital_usd, 16 * s.node.capital_usd);
}

// A cluster whose node profile has no purchase price reports no capital,
// rather than the fabric's alone as if the nodes were free.
TEST(CostModelTest, CapitalIsReportedOnlyWhenEveryPartIsPriced) {
  const Scenario s = Ref70b16({"cluster.node=dgx-h100"});
  ASSERT_LE(s.node.capital_usd, 0);
  EXPECT_FALSE(ClusterCapitalPriced(s));
  EXPECT_GT(ClusterCapital(s).total_usd(), 0);  // the fabric's switches and links
  RunReport run;
  run.time_to_train_s = 3600;
  ApplyCostModel(s, run);
  EXPECT_EQ(run.capital_usd, 0);
  EXPECT_GT(run.cost_usd, 0);
  EXPECT_TRUE(ClusterCapitalPriced(Ref70b16({})));
}

// A scenario's own price is taken as given, 0 included (a cluster not rented).
TEST(CostModelTest, ScenarioPriceOfZeroIsKept) {
  const Scenario s = Ref70b16({"cost.node_hour_usd=0", "cost.storage_node_hour_usd=0"});
  RunReport run;
  run.time_to_train_s = 3600;
  ApplyCostModel(s, run);
  EXPECT_EQ(run.cost_usd, 0);
  EXPECT_GT(run.capital_usd, 0);
}

TEST(CostModelTest, SimulatedRunSaysWhichModelPricedIt) {
  const SimulationResult own = Simulate(Ref70b16({"cost.model=ownership"}));
  const SimulationResult rent = Simulate(Ref70b16({}));
  ASSERT_TRUE(own.error.empty()) << own.error;
  EXPECT_EQ(own.run.cost_model, "ownership");
  EXPECT_EQ(rent.run.cost_model, "rental");
  EXPECT_DOUBLE_EQ(own.run.time_to_train_s, rent.run.time_to_train_s);
  // Owning 16 nodes for a 500-step run costs a sliver of the rental bill.
  EXPECT_LT(own.run.cost_usd, rent.run.cost_usd);
}

}  // namespace
}  // namespace trainsim
