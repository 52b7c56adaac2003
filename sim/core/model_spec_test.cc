#include "sim/core/model_spec.h"

#include <gtest/gtest.h>

namespace trainsim {
namespace {

// MoeLayers is a closed form of counting IsMoeLayer over the layers (the
// planner asks it for every configuration): the two agree on every layout.
TEST(ModelSpecTest, MoeLayersCountsTheMoeLayers) {
  ModelSpec m;
  for (int experts : {0, 8}) {
    for (int layers : {0, 1, 7, 61, 80}) {
      for (int dense : {0, 1, 3, 61, 90}) {
        for (int interval : {0, 1, 2, 3, 4}) {
          m.layers = layers;
          m.moe.experts = experts;
          m.moe.first_k_dense = dense;
          m.moe.layer_interval = interval;
          int counted = 0;
          for (int i = 0; i < layers; ++i) counted += m.IsMoeLayer(i) ? 1 : 0;
          EXPECT_EQ(m.MoeLayers(), counted) << experts << " experts, " << layers << " layers, " << dense << " dense, interval " << interval;
        }
      }
    }
  }
}

}  // namespace
}  // namespace trainsim
