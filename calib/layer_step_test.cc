#include "calib/layer_step.h"

#include <gtest/gtest.h>

#include "calib/cpu_ops.h"
#include "calib/host_kernels.h"

namespace trainsim::calib {
namespace {

const LayerShape kSmall{32, 48, 4, 2, 8, 2};

double Loss(const LayerShape& s, const LayerInputs& in) {
  host::ReferenceOps ops;
  LayerStep<host::ReferenceOps> l(ops, s, in);
  l.Forward();
  double loss = 0;  // L = sum(y * dy): its gradient wrt x is what Backward() computes from dy
  for (size_t i = 0; i < in.dy.size(); ++i) loss += double(l.y()[i]) * in.dy[i];
  return loss;
}

TEST(LayerStep, EigenBackendMatchesReference) {
  const LayerInputs in = MakeLayerInputs(kSmall);
  CpuOps cpu;
  host::ReferenceOps ref;
  LayerStep<CpuOps> a(cpu, kSmall, in);
  LayerStep<host::ReferenceOps> b(ref, kSmall, in);
  a.Forward();
  a.Backward();
  b.Forward();
  b.Backward();
  EXPECT_LT(host::MaxRelativeError(a.y(), b.y()), 1e-5);
  EXPECT_LT(host::MaxRelativeError(a.dx(), b.dx()), 1e-4);
  EXPECT_LT(host::MaxRelativeError(a.dw_qkv(), b.dw_qkv()), 1e-4);
  EXPECT_LT(host::MaxRelativeError(a.dw_1(), b.dw_1()), 1e-4);
  EXPECT_LT(host::MaxRelativeError(a.dg_1(), b.dg_1()), 1e-4);
}

TEST(LayerStep, BackwardMatchesFiniteDifferences) {
  const LayerInputs in = MakeLayerInputs(kSmall);
  host::ReferenceOps ops;
  LayerStep<host::ReferenceOps> l(ops, kSmall, in);
  l.Forward();
  l.Backward();
  const double eps = 1e-2;
  // Inputs of the first and the last token of each sequence, several features.
  for (size_t idx : {size_t(0), size_t(5), size_t(7 * 32 + 3), size_t(8 * 32 + 31), size_t(15 * 32 + 17)}) {
    LayerInputs plus = in, minus = in;
    plus.x[idx] += float(eps);
    minus.x[idx] -= float(eps);
    const double fd = (Loss(kSmall, plus) - Loss(kSmall, minus)) / (2 * eps);
    EXPECT_NEAR(l.dx()[idx], fd, 2e-3 + 2e-2 * std::fabs(fd)) << "x[" << idx << "]";
  }
  // A weight of the QKV projection (a key column: GQA gradients are summed per group).
  const size_t w_idx = 3 * kSmall.qkv_width() + kSmall.heads * kSmall.head_dim() + 2;
  LayerInputs plus = in, minus = in;
  plus.w_qkv[w_idx] += float(eps);
  minus.w_qkv[w_idx] -= float(eps);
  const double fd = (Loss(kSmall, plus) - Loss(kSmall, minus)) / (2 * eps);
  EXPECT_NEAR(l.dw_qkv()[w_idx], fd, 2e-3 + 2e-2 * std::fabs(fd));
}

TEST(LayerStep, AttentionIsCausal) {
  LayerInputs in = MakeLayerInputs(kSmall);
  host::ReferenceOps ops;
  LayerStep<host::ReferenceOps> a(ops, kSmall, in);
  a.Forward();
  const auto y0 = a.y();
  in.x[7 * 32 + 1] += 1.0f;  // last token of the first sequence
  LayerStep<host::ReferenceOps> b(ops, kSmall, in);
  b.Forward();
  for (size_t i = 0; i < 7 * 32; ++i) ASSERT_EQ(y0[i], b.y()[i]) << i;  // earlier tokens unchanged
  EXPECT_NE(y0[7 * 32 + 1], b.y()[7 * 32 + 1]);
}

TEST(LayerStep, InputsAreDeterministic) {
  const LayerInputs a = MakeLayerInputs(kSmall), b = MakeLayerInputs(kSmall);
  EXPECT_EQ(a.w_qkv, b.w_qkv);
  EXPECT_EQ(a.x, b.x);
  EXPECT_NE(MakeLayerInputs(kSmall, 2).x, a.x);
}

}  // namespace
}  // namespace trainsim::calib
