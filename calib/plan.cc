#include "calib/plan.h"

#include <algorithm>
#include <cstdio>
#include <set>
#include <sstream>
#include <tuple>

#include "calib/layer_prediction.h"
#include "models/workload.h"
#include "sim/io/scenario_loader.h"

namespace trainsim::calib {

bool GemmShape::operator<(const GemmShape& o) const {
  return std::tie(m, n, k, batch, layout) < std::tie(o.m, o.n, o.k, o.batch, o.layout);
}

bool GroupedGemmShape::operator<(const GroupedGemmShape& o) const {
  return std::tie(m, n, k, experts, layout) < std::tie(o.m, o.n, o.k, o.experts, o.layout);
}

std::string LayoutForOperator(const std::string& name) {
  auto ends = [&](const std::string& suffix) {
    return name.size() >= suffix.size() && name.compare(name.size() - suffix.size(), suffix.size(), suffix) == 0;
  };
  const std::string scores = "attention scores QK^T";
  if (ends(" wgrad") || ends(" dgrad2")) return "tn";  // X^T dY; P^T dO; dS^T q
  if (ends(" dgrad")) return name == scores + " dgrad" ? "nn" : "nt";  // dS k; dY W^T; dO v^T
  return name == scores ? "nt" : "nn";  // q k^T; X W; P v
}

std::string KernelForOperator(const std::string& name) {
  const bool bwd = name.size() > 9 && name.compare(name.size() - 9, 9, " backward") == 0;
  const std::string base = bwd ? name.substr(0, name.size() - 9) : name;
  std::string k;
  if (base == "input norm" || base == "post-attention norm") k = "rmsnorm";
  else if (base == "rotary") k = "rotary";
  else if (base == "scale-mask-softmax") k = "softmax";
  else if (base == "swiglu") k = "swiglu";
  else if (base == "residual") return "add";  // the backward of an add is a pass-through plus an add
  else return "";
  return k + (bwd ? "_bwd" : "_fwd");
}

CalibrationPlan MakePlan(const std::vector<LayerShape>& layers) {
  CalibrationPlan p;
  p.layers = layers;
  std::set<GemmShape> gemms;
  GpuProfile any;  // the workload does not depend on the hardware
  long max_tensor = 0;
  for (const auto& shape : layers) {
    const Workload w = BuildWorkload(LayerScenario(shape, any));
    for (const PassWork* pass : {&w.layer(0).forward, &w.layer(0).backward}) {
      for (const auto& op : pass->ops) {
        if (op.cls == OpClass::kGemm) {
          gemms.insert(GemmShape{op.m, op.n, op.k, op.batch, LayoutForOperator(op.name.str())});
        } else if (op.cls == OpClass::kMemoryBound) {
          const std::string k = KernelForOperator(op.name.str());
          if (!k.empty()) p.memory.push_back(MemoryKernel{k, op.bytes, shape});
        }
      }
    }
    max_tensor = std::max(max_tensor, shape.tokens() * std::max(shape.hidden, 2 * shape.ffn_hidden));
  }
  p.gemms.assign(gemms.begin(), gemms.end());
  // Streaming sizes: the activation tensors the layers move, up to the largest.
  for (long n = 1 << 16; n < max_tensor; n *= 4) p.copy_floats.push_back(n);
  p.copy_floats.push_back(std::max(max_tensor, 1L << 16));
  return p;
}

int AddWorkloadGemms(const Workload& w, CalibrationPlan& p) {
  std::set<GemmShape> gemms(p.gemms.begin(), p.gemms.end());
  std::set<GroupedGemmShape> grouped(p.grouped.begin(), p.grouped.end());
  const size_t before = gemms.size() + grouped.size();
  auto add = [&](const PassWork& pass) {
    for (const auto& op : pass.ops) {
      if (op.cls == OpClass::kGemm && op.m >= 1 && op.n >= 1 && op.k >= 1) {
        const std::string layout = LayoutForOperator(op.name.str());
        gemms.insert(GemmShape{op.m, op.n, op.k, std::max(1L, op.batch), layout});
        // Local experts' weights, a GEMM launched per expert: TE's grouped GEMM.
        if (op.batch > 1 && !op.activation_operands && op.kernels >= op.batch) {
          grouped.insert(GroupedGemmShape{op.m, op.n, op.k, op.batch, layout});
        }
      }
    }
  };
  for (const auto& kind : w.kinds) {
    add(kind.forward);
    add(kind.backward);
  }
  for (const PassWork* pass : {&w.embedding_forward, &w.embedding_backward, &w.head_forward, &w.head_backward}) add(*pass);
  p.gemms.assign(gemms.begin(), gemms.end());
  p.grouped.assign(grouped.begin(), grouped.end());
  return int(gemms.size() + grouped.size() - before);
}

Expected<int> AddScenarioGemms(const std::string& file, const std::vector<std::string>& overrides, CalibrationPlan& p) {
  Expected<Scenario> sc = LoadScenario(file, overrides);
  if (!sc) return sc.error();
  try {
    return AddWorkloadGemms(BuildWorkload(*sc), p);
  } catch (const InputException& e) {
    return e.error();
  }
}

std::string PlanText(const CalibrationPlan& p) {
  std::ostringstream o;
  o << "# trainsim calibration plan: the microbenchmarks of the workload model's operators\n";
  auto dims = [](const LayerShape& s) {
    std::ostringstream d;
    d << s.hidden << " " << s.ffn_hidden << " " << s.heads << " " << s.kv_heads << " " << s.seq_len << " " << s.micro_batch;
    return d.str();
  };
  for (const auto& l : p.layers) o << "layer " << dims(l) << "\n";
  for (const auto& g : p.gemms) o << "gemm " << g.m << " " << g.n << " " << g.k << " " << g.batch << " " << g.layout << "\n";
  for (const auto& g : p.grouped) o << "grouped " << g.m << " " << g.n << " " << g.k << " " << g.experts << " " << g.layout << "\n";
  for (const auto& m : p.memory) o << "memory " << m.kernel << " " << m.bytes << " " << dims(m.shape) << "\n";
  for (long c : p.copy_floats) o << "copy " << c << "\n";
  return o.str();
}

Expected<CalibrationPlan> ParsePlanText(const std::string& text, const std::string& file) {
  CalibrationPlan p;
  std::istringstream in(text);
  std::string line;
  int lineno = 0;
  auto read_shape = [](std::istringstream& ls, LayerShape& s) {
    return bool(ls >> s.hidden >> s.ffn_hidden >> s.heads >> s.kv_heads >> s.seq_len >> s.micro_batch) && s.Valid();
  };
  while (std::getline(in, line)) {
    ++lineno;
    if (line.empty() || line[0] == '#') continue;
    std::istringstream ls(line);
    std::string kind;
    ls >> kind;
    bool ok = true;
    if (kind == "layer") {
      LayerShape s;
      ok = read_shape(ls, s);
      p.layers.push_back(s);
    } else if (kind == "gemm") {
      GemmShape g;
      ok = bool(ls >> g.m >> g.n >> g.k >> g.batch) && g.m > 0 && g.n > 0 && g.k > 0 && g.batch > 0;
      if (ok && (ls >> g.layout)) ok = g.layout == "nn" || g.layout == "nt" || g.layout == "tn";
      else g.layout = "nn";
      p.gemms.push_back(g);
    } else if (kind == "grouped") {
      GroupedGemmShape g;
      ok = bool(ls >> g.m >> g.n >> g.k >> g.experts >> g.layout) && g.m > 0 && g.n > 0 && g.k > 0 && g.experts > 1 &&
           (g.layout == "nn" || g.layout == "nt" || g.layout == "tn");
      p.grouped.push_back(g);
    } else if (kind == "memory") {
      MemoryKernel m;
      ok = bool(ls >> m.kernel >> m.bytes) && m.bytes > 0 && read_shape(ls, m.shape);
      p.memory.push_back(m);
    } else if (kind == "copy") {
      long n = 0;
      ok = bool(ls >> n) && n > 0;
      p.copy_floats.push_back(n);
    } else {
      return InputError{file, lineno, kind, "unknown plan entry (expected layer, gemm, grouped, memory or copy)"};
    }
    std::string extra;
    if (!ok || (ls >> extra)) return InputError{file, lineno, kind, "malformed '" + kind + "' line: '" + line + "'"};
  }
  return p;
}

std::string ParseShapeSpec(const std::string& spec, LayerShape& s) {
  char tail = 0;
  const int n = std::sscanf(spec.c_str(), "%d:%d:%d:%d:%d:%d%c", &s.hidden, &s.ffn_hidden, &s.heads, &s.kv_heads,
                            &s.seq_len, &s.micro_batch, &tail);
  if (n != 6) return "'" + spec + "' is not HIDDEN:FFN:HEADS:KV_HEADS:SEQ:MICRO_BATCH";
  if (!s.Valid()) return "'" + spec + "': hidden must divide by heads, heads by kv_heads, and head_dim must be even";
  // The layer's fp32 weights and one micro batch's activations, a floor under
  // what a backend allocates: past any GPU's memory the shape is a slip, and
  // the CPU backend would only exhaust the machine finding out.
  const double h = s.hidden, f = s.ffn_hidden, t = double(s.tokens());
  const double bytes = 4 * (h * s.qkv_width() + h * h + 3 * h * f) + 4 * t * (3 * h + s.qkv_width() + 3 * f);
  constexpr double kMaxBytes = 256.0 * (1ull << 30);
  if (bytes > kMaxBytes) {
    char buf[160];
    std::snprintf(buf, sizeof buf, "': its weights and activations alone take %.0f GiB, more than any GPU's memory (at most %.0f GiB)",
                  bytes / (1ull << 30), kMaxBytes / (1ull << 30));
    return "'" + spec + buf;
  }
  return "";
}

}  // namespace trainsim::calib
