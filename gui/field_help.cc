#include "gui/field_help.h"

#include <QObject>
#include <map>

#include "sim/core/scenario.h"
#include "sim/run/micro_batch_choice.h"

namespace trainsim::gui {

namespace {

struct Help {
  const char* meaning;
  const char* default_value;
  const char* source;
};

const std::map<QString, Help>& Table() {
  static const std::map<QString, Help> t = {
      {"name", {"A label for this configuration: it names the column, the chart bars and the headline.", "the file's name", "you"}},
      {"cluster.node", {"The GPU server: its GPUs, NVLink, NICs, power and price.", "required", "hardware-profiles/nodes/ (datasheets)"}},
      {"cluster.nodes", {"How many nodes train together.", "required", "you"}},
      {"cluster.nics_per_node",
       {"Scale-out NICs per node (e.g. 8 or 4 ConnectX-7): the bandwidth of data-, pipeline- and context-parallel "
        "traffic between nodes, and part of the node's price.",
        "the node profile's NICs", "hardware-profiles/nodes/"}},
      {"cluster.nodes_per_nvlink_domain",
       {"Rack-scale systems (GB200/GB300 NVL72): the nodes of each NVLink domain the ranks fill before the next, as Slurm's "
        "--segment places them. A rank group that straddles two domains takes its collectives over the NICs, and the step "
        "waits for the slowest group.",
        "the job's nodes where one domain holds them, else the largest count up to a domain's that divides them "
        "(Megatron-Bridge's launcher; a prime count: whole domains in turn)", "you (your scheduler)"}},
      {"cluster.fabric", {"The network between nodes: switch tiers, latency, oversubscription.", "the node profile's default fabric",
                          "hardware-profiles/fabrics/"}},
      {"cluster.storage", {"Where checkpoints are written and training data is read from; none: no checkpoints, no data stalls.",
                           "none", "hardware-profiles/storage/"}},
      {"cluster.storage_nodes", {"Storage nodes serving the cluster: their aggregate write and read bandwidth.",
                                 "the storage profile's", "hardware-profiles/storage/"}},
      {"model", {"The transformer trained: a catalogue name, a model .yaml or a Hugging Face config.json (in the file, "
                 "{file: PATH, accept_unknown_keys: [KEY]} takes config.json keys trainsim does not model as changing nothing, with a warning).", "required",
                 "models/catalogue/"}},
      {"parallelism.tensor", {"Tensor parallelism (TP): GPUs sharing each layer's matrices; its all-reduces stay on NVLink "
                              "when TP fits in a node.", "1", "you"}},
      {"parallelism.pipeline", {"Pipeline parallelism (PP): stages of consecutive layers, micro batches flowing through them (1F1B).",
                                "1", "you"}},
      {"parallelism.context", {"Context parallelism (CP): GPUs sharing one sequence, exchanging K/V in a ring.", "1", "you"}},
      {"parallelism.data", {"Data parallelism (DP): model replicas; tensor x pipeline x context x data must equal the GPUs.",
                            "auto (the GPUs left over)", "you"}},
      {"parallelism.expert", {"Expert parallelism (EP, mixtures of experts): GPUs the routed experts are spread over; tokens reach "
                              "their experts by all-to-all, on NVLink inside a node, over the NICs beyond it.", "1", "you"}},
      {"parallelism.expert_tensor", {"Expert tensor parallelism (ETP): GPUs each expert's MLP is split over; EP x ETP must divide "
                                     "tensor x context x data (Megatron-Core's MoE parallel folding).", "1", "you"}},
      {"parallelism.moe_a2a_overlap", {"Hide the MoE all-to-alls behind compute (Megatron-Core overlap_moe_expert_parallel_comm).",
                                       "the framework's", "framework profile"}},
      {"parallelism.moe_dispatcher", {"How MoE tokens reach their experts: alltoall (one copy per token and expert, NCCL), deepep or "
                                      "hybridep (one copy per destination node or NVLink domain across the NICs, fanned out over NVLink), allgather "
                                      "(Megatron-Core's default: every token of the ETP x EP group gathered on each rank, an fp32 reduce-scatter back).",
                                      "the framework's", "framework profile"}},
      {"parallelism.virtual_stages", {"Interleaved pipeline chunks per stage: a smaller bubble for more pipeline sends; 1 is plain 1F1B.",
                                      "1", "you"}},
      {"parallelism.sequence_parallel", {"Shard layer norms and dropout along the sequence across the TP group (Megatron SP).",
                                         "on when tensor > 1", "the framework profile"}},
      {"parallelism.distributed_optimizer", {"Shard optimizer state across data-parallel ranks (ZeRO-1): less memory, a "
                                             "reduce-scatter and an all-gather instead of an all-reduce.",
                                             "on", "the framework profile"}},
      {"parallelism.data_sharding", {"What the data-parallel ranks shard: none (DDP, every rank holds everything), optimizer (ZeRO-1, "
                                     "the same as the distributed optimizer), gradients (ZeRO-2: gradients reduce-scattered per micro "
                                     "batch), full (FSDP / ZeRO-3: parameters gathered per layer, forward and backward).",
                                     "the distributed optimizer's setting", "you"}},
      {"parallelism.sharding_group", {"HSDP: shard inside groups of this many data-parallel ranks and replicate across the groups "
                                      "(an all-reduce between replicas once per step); keeps the gathers inside a node or rack.",
                                      "all data-parallel ranks (one group)", "you"}},
      {"training.finetune.method", {"Fine-tuning instead of pre-training: lora freezes the base weights and trains low-rank adapters "
                                    "beside the framework's target projections; full trains every weight from a pre-trained start.",
                                    "none (pre-training)", "you"}},
      {"training.finetune.rank", {"LoRA: the adapters' rank r (each adapted projection gains r x (in + out) trainable weights).", "{default_lora_rank}",
                                  "you"}},
      {"cost.model", {"rental: node-hours at the node profile's price; ownership: the purchase written off over the site's years, "
                      "plus energy at the site's price and PUE.",
                      "rental", "hardware-profiles/nodes/ and sites/"}},
      {"training.seq_len", {"Tokens per sequence.", "4096", "you"}},
      {"training.global_batch", {"Sequences per optimizer step, over all replicas.", "required", "you"}},
      {"training.micro_batch", {"Sequences per forward/backward pass on one GPU; global batch / (micro batch x DP) passes per step. "
                                "auto: the fastest power of two up to {auto_micro_batch_max} that fits.",
                                "auto", "you"}},
      {"training.steps", {"Optimizer steps in the run: time, energy and cost to train scale with it.", "required unless training.tokens is given", "you"}},
      {"training.precision", {"Number format of the matrix multiplies: sets the GPU's peak FLOP/s and the bytes moved.", "bf16",
                              "the GPU profile's peaks (datasheet)"}},
      {"training.recompute", {"Activation recomputation: none keeps every activation; selective recomputes attention; full "
                              "recomputes each layer in the backward pass (least memory, about a third more compute).",
                              "none", "you"}},
      {"training.recompute_modules", {"With selective recompute, what the backward re-runs instead of keeping (Megatron-Core's "
                                      "recompute_modules): {recompute_modules}.",
                                      "[core_attn]", "you"}},
      {"checkpoint.every_steps", {"Write a checkpoint every N steps; 0: never.", "0 (never)", "you"}},
      {"checkpoint.contents", {"full: weights and optimizer state (resumable); weights: weights only.", "full", "you"}},
      {"checkpoint.mode", {"sync: training waits for the write; async: a device-to-host copy stalls, the write overlaps "
                           "the following steps.", "sync", "you"}},
  };
  return t;
}

// The facts the library owns, where the help names them: one place each.
QString WithLibraryFacts(QString text) {
  QStringList modules;
  for (const auto& m : RecomputeModuleNames()) modules << QString::fromStdString(m);
  text.replace("{auto_micro_batch_max}", QString::number(kAutoMicroBatchMax));
  text.replace("{recompute_modules}", modules.join(", "));
  text.replace("{default_lora_rank}", QString::number(Finetune{}.rank));
  return text;
}

}  // namespace

QString FieldHelp(const QString& key) {
  const auto& t = Table();
  const auto it = t.find(key);
  if (it == t.end()) return {};
  return QObject::tr("<b>%1</b>: %2<br>Default: %3. Source: %4.")
      .arg(key, WithLibraryFacts(QObject::tr(it->second.meaning)), WithLibraryFacts(QObject::tr(it->second.default_value)), QObject::tr(it->second.source));
}

QString HelpPageHtml() {
  return QObject::tr(
      "<h2>trainsim-gui</h2>"
      "<p>Compares cluster and parallelism options for training a large language model: each configuration is a "
      "scenario file of the <tt>trainsim</tt> CLI, and every figure comes from the same library the CLI runs.</p>"
      "<h3>How to read the comparison</h3>"
      "<ul><li>The first configuration is the <b>baseline</b>; every other one shows its value, its change "
      "(Δ) and the change in percent (green: better, red: worse), and a headline: time to train, cost per run, "
      "energy, and what its step is made of.</li>"
      "<li><b>Step time breakdown</b>: compute, exposed communication (what overlap does not hide), the pipeline "
      "bubble, the optimizer and data stalls, per step.</li>"
      "<li><b>Memory per GPU</b> against what the GPU can use; a run that does not fit says <i>cannot run</i> and "
      "draws no time or cost.</li>"
      "<li><b>Scaling</b>: the same configuration from an eighth to eight times its node count (data parallelism "
      "re-derived), analytical; a node count where it cannot run has no point.</li>"
      "<li><b>Heatmap</b>: for each tensor x pipeline size, the best step time over virtual stages, micro batch and "
      "recompute, searched as <tt>trainsim plan</tt> does; hover a cell for what it chose.</li>"
      "<li><b>Timeline</b> (DES only): one simulated step, a bar per forward (F) and backward (B) pass of each micro "
      "batch and chunk (F3.c1: micro batch 3, chunk 1), the sends between stages and the data-parallel collectives. "
      "Wheel to zoom, drag to pan, double-click for the whole step. <tt>trainsim run --trace</tt> writes the same "
      "events for Perfetto.</li></ul>"
      "<h3>Method</h3>"
      "<p>Per layer, the transformer's operators (GEMMs, attention, element-wise kernels) are costed from the GPU "
      "profile (peak FLOP/s and memory bandwidth from datasheets, GEMM efficiency by shape) and the collectives from "
      "the NVLink, NIC and fabric profiles (ring and tree algorithms, latency plus size over bandwidth). "
      "<b>Analytical</b> fidelity composes them in closed form (1F1B or interleaved schedule, overlap rules of the "
      "software stack). <b>DES</b> fidelity runs the schedule on SimGrid: every stage's passes, every send and "
      "collective as flows sharing the links, data reads and checkpoint writes contending with training traffic. "
      "The run model adds checkpoints, expected failures (node MTBF), restarts, energy (node power) and cost "
      "(node-hour prices).</p>"
      "<h3>Accuracy</h3>"
      "<p><tt>trainsim validate</tt> predicts published training runs from profiles with no number fitted to "
      "those runs: Megatron-LM on A100 and NeMo on H100 (27 runs, 2021-24) and 154 runs from 2024-26 (dense and "
      "mixture-of-experts pre-training and LoRA fine-tuning on H100, H200, B200 and GB200); README.md (accuracy) "
      "has the errors by GPU, kind and precision. Dense models on H100 are predicted best; B200 and GB200, whose "
      "attention and memory-bound rates are estimates until calibrated on one, and mixtures of experts less well, "
      "mostly fast. The headline under the results gives each configuration's own track record: the "
      "published runs of its GPU, kind and (where enough) band of experts per GPU and precision, predicted now; and, where the GPU waits 2% of the "
      "step or more for the host to issue kernels (fine-grained experts), that share and the host cost per kernel it "
      "rests on, an estimate until measured from a trace of your stack (<tt>trainsim calibrate --host-trace</tt>). "
      "Expect that order of error for configurations like those; further from them "
      "(other GPUs, unusual shapes, storage-bound runs) the error is not measured. Relative comparisons (8 vs 4 "
      "NICs on the same model) are more reliable than absolute times, since most modelling errors are shared.</p>");
}

}  // namespace trainsim::gui
